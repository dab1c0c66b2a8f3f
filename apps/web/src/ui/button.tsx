import { useRef, type ButtonHTMLAttributes, type ReactNode } from 'react';
import { Spinner } from './icon';

type Variant = 'primary' | 'secondary' | 'ghost' | 'danger';

const variants: Record<Variant, string> = {
  primary:
    'bg-blue-700 text-white shadow-sm hover:bg-blue-800 active:bg-blue-900 disabled:bg-blue-700/50 border border-blue-800/40',
  secondary:
    'bg-white text-slate-800 border border-slate-300 shadow-xs hover:bg-slate-50 active:bg-slate-100 disabled:text-slate-400',
  ghost: 'text-slate-700 hover:bg-slate-100 active:bg-slate-200 disabled:text-slate-400',
  danger: 'bg-red-700 text-white hover:bg-red-800 disabled:bg-red-700/50 border border-red-800/40',
};

export const focusRing =
  'outline-none focus-visible:ring-2 focus-visible:ring-blue-600 focus-visible:ring-offset-1 focus-visible:ring-offset-white';

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: Variant;
  size?: 'sm' | 'md';
  busy?: boolean;
  icon?: ReactNode;
}

export function Button({
  variant = 'secondary',
  size = 'md',
  busy = false,
  icon,
  className = '',
  disabled,
  children,
  type = 'button',
  ...rest
}: ButtonProps) {
  const sizing = size === 'sm' ? 'h-7 px-2.5 text-xs gap-1.5' : 'h-8 px-3 text-sm gap-2';
  return (
    <button
      type={type}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      className={`inline-flex shrink-0 items-center justify-center rounded-md font-medium whitespace-nowrap transition-colors disabled:cursor-not-allowed ${sizing} ${variants[variant]} ${focusRing} ${className}`}
      {...rest}
    >
      {busy ? <Spinner /> : icon}
      {children}
    </button>
  );
}

/**
 * A button that asks for a file: the file input stays hidden (out of the tab order and of the accessibility
 * tree; the button is what people reach), and is emptied after each choice so the same file can be chosen
 * again after a refusal.
 */
export function FileButton({
  accept,
  onFile,
  fileTestId,
  ...button
}: Omit<ButtonProps, 'onClick' | 'type'> & {
  accept: string;
  onFile: (file: File) => void;
  /** the hidden input's test id (the tests set its files) */
  fileTestId?: string;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={input}
        type="file"
        accept={accept}
        className="sr-only"
        tabIndex={-1}
        aria-hidden="true"
        data-testid={fileTestId}
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (file) onFile(file);
        }}
      />
      <Button {...button} onClick={() => input.current?.click()} />
    </>
  );
}
