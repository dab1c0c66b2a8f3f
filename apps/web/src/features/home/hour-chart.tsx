import { useId, useMemo, useState, type KeyboardEvent } from 'react';
import { scaleBand, scaleLinear } from '@visx/scale';
import { AreaClosed, Bar, LinePath } from '@visx/shape';

/** One series of a chart: its name, its colour (a tailwind fill/stroke class) and a value per hour. */
export interface HourSeries {
  key: string;
  label: string;
  /** fill (bars, area) and stroke (line) classes */
  className: string;
  values: readonly number[];
}

const W = 360;
const H = 96;
const PAD = { top: 6, right: 4, bottom: 16, left: 4 };

/**
 * The last day hour by hour, drawn with visx (SVG): stacked bars, or an area for a level (devices online).
 * Keyboard-reachable (issue 25 item 11): the chart is one stop of Tab; ←/→ (Home/End) move through the hours
 * and the line under it says that hour's figures (a live region), as hovering does with the mouse.
 */
export function HourChart({
  title,
  hours,
  series,
  kind,
  testId,
  hint,
}: {
  title: string;
  /** the hours' labels (`14:00`), oldest first */
  hours: readonly string[];
  series: readonly HourSeries[];
  kind: 'bars' | 'area';
  testId: string;
  /** the keys' hint under the chart */
  hint: string;
}) {
  const [cursor, setCursor] = useState<number | null>(null);
  const captionId = useId();
  const n = hours.length;
  const totals = useMemo(
    () => hours.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0)),
    [hours, series],
  );
  const max = Math.max(1, ...(kind === 'area' ? series.flatMap((s) => [...s.values]) : totals));
  const x = scaleBand<number>({
    domain: hours.map((_, i) => i),
    range: [PAD.left, W - PAD.right],
    padding: 0.2,
  });
  const y = scaleLinear<number>({ domain: [0, max], range: [H - PAD.bottom, PAD.top], nice: true });
  const at = cursor ?? n - 1;
  const caption =
    n === 0 ? '' : `${hours[at]} — ${series.map((s) => `${s.label}: ${s.values[at] ?? 0}`).join(', ')}`;

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const next =
      e.key === 'ArrowLeft'
        ? Math.max(0, at - 1)
        : e.key === 'ArrowRight'
          ? Math.min(n - 1, at + 1)
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? n - 1
              : null;
    if (next === null) return;
    e.preventDefault();
    setCursor(next);
  };

  return (
    <figure className="min-w-0 px-3 py-2" data-testid={testId}>
      <figcaption className="flex items-baseline justify-between gap-2 text-xs font-medium text-slate-700">
        <span>{title}</span>
        <span className="flex gap-2 font-normal text-slate-600">
          {series.length > 1 &&
            series.map((s) => (
              <span key={s.key} className="inline-flex items-center gap-1">
                <svg className="size-2" aria-hidden="true">
                  <rect width="8" height="8" rx="2" className={s.className} />
                </svg>
                {s.label}
              </span>
            ))}
        </span>
      </figcaption>
      <div
        role="group"
        tabIndex={0}
        aria-label={title}
        aria-describedby={captionId}
        aria-roledescription="chart"
        onKeyDown={onKey}
        onBlur={() => setCursor(null)}
        className="mt-1 rounded outline-none focus-visible:ring-2 focus-visible:ring-blue-600"
        data-testid={`${testId}-plot`}
      >
        <svg viewBox={`0 0 ${W} ${H}`} className="h-24 w-full" aria-hidden="true" preserveAspectRatio="none">
          <line
            x1={PAD.left}
            x2={W - PAD.right}
            y1={H - PAD.bottom}
            y2={H - PAD.bottom}
            className="stroke-slate-300"
          />
          {kind === 'bars' &&
            hours.map((_, i) => {
              let base = H - PAD.bottom;
              return series.map((s) => {
                const v = s.values[i] ?? 0;
                const height = H - PAD.bottom - y(v);
                const top = base - height;
                base = top;
                return v > 0 ? (
                  <Bar
                    key={`${s.key}-${i}`}
                    x={x(i)}
                    y={top}
                    width={x.bandwidth()}
                    height={height}
                    className={s.className}
                    opacity={cursor === null || cursor === i ? 1 : 0.45}
                  />
                ) : null;
              });
            })}
          {kind === 'area' &&
            series.map((s) => (
              <g key={s.key}>
                <AreaClosed<number>
                  data={[...s.values]}
                  x={(_, i) => (x(i) ?? 0) + x.bandwidth() / 2}
                  y={(v) => y(v)}
                  yScale={y}
                  className={s.className}
                  opacity={0.25}
                />
                <LinePath<number>
                  data={[...s.values]}
                  x={(_, i) => (x(i) ?? 0) + x.bandwidth() / 2}
                  y={(v) => y(v)}
                  className={s.className}
                  fill="none"
                  strokeWidth={1.5}
                />
              </g>
            ))}
          {cursor !== null && (
            <line
              x1={(x(cursor) ?? 0) + x.bandwidth() / 2}
              x2={(x(cursor) ?? 0) + x.bandwidth() / 2}
              y1={PAD.top}
              y2={H - PAD.bottom}
              className="stroke-slate-500"
              strokeDasharray="2 2"
            />
          )}
          {hours.map((_, i) =>
            i % 6 === 0 ? (
              <text
                key={i}
                x={(x(i) ?? 0) + x.bandwidth() / 2}
                y={H - 4}
                textAnchor="middle"
                className="fill-slate-600 text-[9px]"
              >
                {hours[i]}
              </text>
            ) : null,
          )}
          {/* the mouse picks an hour as the keys do */}
          {hours.map((_, i) => (
            <rect
              key={`hit-${i}`}
              x={(x(i) ?? 0) - (x.step() - x.bandwidth()) / 2}
              y={0}
              width={x.step()}
              height={H}
              fill="transparent"
              onMouseEnter={() => setCursor(i)}
              onMouseLeave={() => setCursor(null)}
            />
          ))}
        </svg>
      </div>
      <p
        id={captionId}
        className="mt-1 text-xs text-slate-700 tabular-nums"
        aria-live="polite"
        data-testid={`${testId}-value`}
      >
        {caption}
      </p>
      <p className="text-[11px] text-slate-500">{hint}</p>
    </figure>
  );
}
