import { useEffect, useId, useLayoutEffect, useRef, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Layout } from '@lintel/core';
import { focusRing } from './button';
import { Icon } from './icon';

export type DialogWidth = 'small' | 'normal' | 'wide';

/** Dialog widths of spec part 2 §9: 600 px, 300 small, 900 for group generation. */
const widths: Record<DialogWidth, number> = {
  small: Layout.dialogSmallWidth,
  normal: Layout.dialogMaxWidth,
  wide: Layout.dialogGroupGenerationWidth,
};

export interface DialogProps {
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
  /** the buttons row (Cancel, Approve, actions) */
  footer?: ReactNode;
  width?: DialogWidth;
  /** form dialogs are at least half the viewport high (spec part 2 §9) */
  tall?: boolean;
  testId?: string;
  /** an element (by CSS selector inside the dialog) to focus first; default: the first field */
  initialFocus?: string;
  /** wraps the body and footer, e.g. in a <form> */
  wrap?: (inner: ReactNode) => ReactNode;
  describedBy?: string;
  /** a body of text only (no field, no button) that may scroll: it takes the focus so keys scroll it */
  readOnlyBody?: boolean;
}

/**
 * A modal dialog on the native <dialog> element: the page behind is inert, focus stays inside, Escape
 * closes it, and focus returns where it was. Mounted means open. A dialog opened over another (the palette
 * over a form) stacks on top.
 */
export function Dialog({
  title,
  onClose,
  children,
  footer,
  width = 'normal',
  tall = false,
  testId,
  initialFocus,
  wrap,
  describedBy,
  readOnlyBody = false,
}: DialogProps) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const onCloseRef = useRef(onClose);
  useEffect(() => {
    onCloseRef.current = onClose;
  }, [onClose]);

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const before = document.activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    const first =
      (initialFocus && dialog.querySelector<HTMLElement>(initialFocus)) ||
      dialog.querySelector<HTMLElement>('[data-autofocus]') ||
      dialog.querySelector<HTMLElement>(
        '[data-dialog-body] input:not([type=hidden]):not([disabled]), [data-dialog-body] textarea, [data-dialog-body] select, [data-dialog-body] [role=combobox]',
      );
    first?.focus();
    return () => {
      if (dialog.open) dialog.close();
      if (before?.isConnected) before.focus();
    };
    // opening is once per mount
  }, []);

  const inner = (
    <>
      <div
        data-dialog-body
        className="min-h-0 flex-1 overflow-y-auto px-4 py-3"
        {...(readOnlyBody ? { tabIndex: 0, 'aria-labelledby': titleId } : {})}
      >
        {children}
      </div>
      {footer && (
        <div className="flex shrink-0 items-center justify-end gap-2 border-t border-slate-200 bg-slate-50 px-4 py-2.5">
          {footer}
        </div>
      )}
    </>
  );

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-describedby={describedBy}
      data-testid={testId}
      onCancel={(e) => {
        e.preventDefault();
        onCloseRef.current();
      }}
      style={{ width: `min(${widths[width]}px, calc(100vw - 2rem))`, minHeight: tall ? '50vh' : undefined }}
      className="m-auto max-h-[calc(100dvh-2rem)] flex-col overflow-hidden rounded-lg border border-slate-300 bg-white p-0 text-slate-900 shadow-2xl backdrop:bg-slate-900/40 open:flex"
    >
      <header className="flex h-11 shrink-0 items-center gap-2 border-b border-slate-200 px-4">
        <h2 id={titleId} className="min-w-0 flex-1 truncate text-sm font-semibold">
          {title}
        </h2>
        <button
          type="button"
          onClick={() => onCloseRef.current()}
          aria-label={t('dialog.close')}
          title={t('dialog.close')}
          className={`rounded p-1 text-slate-500 hover:bg-slate-100 hover:text-slate-900 ${focusRing}`}
        >
          <Icon name="close" />
        </button>
      </header>
      {wrap ? wrap(inner) : inner}
    </dialog>
  );
}
