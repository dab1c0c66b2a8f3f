import { useEffect, useRef, type ReactNode, type RefObject } from 'react';

/**
 * A small panel under a toolbar button (filter editor, column chooser). Escape and a click outside close
 * it; focus goes into it on open and back to the button on close. The table's keys stay quiet inside it
 * (it is a dialog).
 */
export function Popover({
  label,
  anchorRef,
  onClose,
  children,
  align = 'left',
  className = '',
  testId,
}: {
  label: string;
  anchorRef: RefObject<HTMLElement | null>;
  onClose: () => void;
  children: ReactNode;
  align?: 'left' | 'right';
  className?: string;
  testId?: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;

  useEffect(() => {
    const panel = ref.current;
    const first = panel?.querySelector<HTMLElement>('[data-autofocus], input, select, textarea, button');
    first?.focus();
    const anchor = anchorRef.current;
    const onDown = (e: PointerEvent) => {
      const t = e.target as Node;
      if (panel && !panel.contains(t) && !anchor?.contains(t)) closeRef.current();
    };
    document.addEventListener('pointerdown', onDown, true);
    return () => {
      document.removeEventListener('pointerdown', onDown, true);
      // back to the button only when focus was inside (a click elsewhere keeps its own focus)
      if (panel?.contains(document.activeElement) || document.activeElement === document.body)
        anchor?.focus();
    };
  }, [anchorRef]);

  return (
    <div
      ref={ref}
      role="dialog"
      aria-label={label}
      data-testid={testId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          e.preventDefault();
          closeRef.current();
        }
      }}
      className={`absolute top-full z-30 mt-1 rounded-lg border border-slate-200 bg-white p-3 text-sm shadow-lg ring-1 ring-slate-900/5 ${
        align === 'right' ? 'right-0' : 'left-0'
      } ${className}`}
    >
      {children}
    </div>
  );
}
