import type { ReactNode } from 'react';
import type { Tone } from '@lintel/commands';

/** The colours of a state's badge by tone (a device's online, a task's error): one look everywhere. */
export const TONE_CLASSES: Record<Tone, string> = {
  good: 'bg-emerald-50 text-emerald-800 ring-emerald-600/25',
  bad: 'bg-red-50 text-red-800 ring-red-600/25',
  warn: 'bg-amber-50 text-amber-900 ring-amber-600/30',
  neutral: 'bg-slate-100 text-slate-700 ring-slate-500/25',
};

/** A state as a badge: its words inside a pill of its tone (`data-tone` says which, for tests and styles). */
export function Badge({ tone, children, testId }: { tone: Tone; children: ReactNode; testId?: string }) {
  return (
    <span
      className={`inline-flex h-5 items-center rounded-full px-2 text-xs leading-5 font-medium ring-1 ring-inset ${TONE_CLASSES[tone]}`}
      data-tone={tone}
      data-testid={testId}
    >
      {children}
    </span>
  );
}
