import { useId, useState, type InputHTMLAttributes, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Limits } from '@lintel/core';
import { focusRing } from './button';
import { Icon, Spinner } from './icon';

export const inputClass =
  'block h-8 w-full min-w-0 rounded-md border bg-white px-2.5 text-sm text-slate-900 shadow-xs placeholder:text-slate-400 ' +
  'read-only:bg-slate-50 read-only:text-slate-600 disabled:bg-slate-100 disabled:text-slate-500 ' +
  'outline-none focus:border-blue-600 focus:ring-2 focus:ring-blue-600/25 ';

/** A small control of a filter bar or a report's parameters (beside others on one line). */
export const compactInputClass =
  'rounded border border-slate-300 px-2 py-1 text-sm focus:outline-none focus-visible:ring-2 focus-visible:ring-sky-500';

/** A small control with its label above it (a filter bar's, a report's parameters). */
export function CompactField({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="flex flex-col gap-1 text-xs text-slate-600">
      {label}
      {children}
    </label>
  );
}

export interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value'> {
  name: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  error?: string | undefined;
  hint?: ReactNode;
  /** an element placed inside the right edge of the input (e.g. show-password) */
  adornment?: ReactNode;
}

/**
 * A control with its label above it (a star when it is required), and below it its error, else its hint: the
 * one wrapper of every labelled field of a form. The ids wire the error and the hint for screen readers.
 */
export function LabelledField({
  label,
  htmlFor,
  required,
  error,
  errorId,
  errorTestId,
  hint,
  hintId,
  className,
  children,
}: {
  label: ReactNode;
  htmlFor: string;
  required?: boolean | undefined;
  error?: string | undefined;
  errorId?: string | undefined;
  errorTestId: string;
  hint?: ReactNode;
  hintId?: string | undefined;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className={className}>
      <label htmlFor={htmlFor} className="mb-1 block text-xs font-medium text-slate-700">
        {label}
        {required && (
          <span aria-hidden="true" className="text-red-600">
            {' '}
            *
          </span>
        )}
      </label>
      {children}
      <FieldError error={error} id={errorId} testId={errorTestId} />
      {hint && !error && (
        <p id={hintId} className="mt-1 text-xs text-slate-500">
          {hint}
        </p>
      )}
    </div>
  );
}

/** A field's error line, below the control (nothing without an error). */
export function FieldError({
  error,
  id,
  testId,
}: {
  error: string | undefined;
  id?: string | undefined;
  testId: string;
}) {
  if (!error) return null;
  return (
    <p id={id} className="mt-1 flex items-center gap-1 text-xs text-red-700" data-testid={testId}>
      <Icon name="error" className="size-3.5 shrink-0" />
      {error}
    </p>
  );
}

/** A labelled input with its hint and its error, wired for screen readers. */
export function TextField({
  name,
  label,
  value,
  onValue,
  error,
  hint,
  adornment,
  className = '',
  id,
  ...rest
}: TextFieldProps) {
  const auto = useId();
  const inputId = id ?? `${auto}-${name}`;
  const hintId = hint ? `${inputId}-hint` : undefined;
  const errorId = error ? `${inputId}-error` : undefined;
  return (
    <LabelledField
      className={className}
      label={label}
      htmlFor={inputId}
      required={rest.required}
      error={error}
      errorId={errorId}
      errorTestId={`error-${name}`}
      hint={hint}
      hintId={hintId}
    >
      <div className="relative">
        <input
          id={inputId}
          name={name}
          value={value}
          onChange={(e) => onValue(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={[errorId, hintId].filter(Boolean).join(' ') || undefined}
          data-testid={`field-${name}`}
          className={`${inputClass} ${adornment ? 'pr-16' : ''} ${error ? 'border-red-500 focus:border-red-600 focus:ring-red-600/25' : 'border-slate-300'}`}
          {...rest}
        />
        {adornment && <div className="absolute inset-y-0 right-1 flex items-center gap-0.5">{adornment}</div>}
      </div>
    </LabelledField>
  );
}

export function AdornmentButton({
  label,
  onClick,
  children,
  pressed,
  testId,
}: {
  label: string;
  onClick: () => void;
  children: ReactNode;
  pressed?: boolean;
  testId?: string;
}) {
  return (
    <button
      type="button"
      onClick={onClick}
      aria-label={label}
      title={label}
      aria-pressed={pressed}
      data-testid={testId}
      className={`rounded p-1 text-slate-500 hover:bg-slate-100 hover:text-slate-800 ${focusRing}`}
    >
      {children}
    </button>
  );
}

const PASSWORD_ALPHABETS = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789', '-_.!@#%+='];

/** A uniform random integer in [0, n), from crypto.getRandomValues (rejection sampling). */
function randomInt(n: number): number {
  const buf = new Uint32Array(1);
  const limit = Math.floor(0x1_0000_0000 / n) * n;
  do crypto.getRandomValues(buf);
  while (buf[0]! >= limit);
  return buf[0]! % n;
}

/** A random password holding every character class. */
export function generatePassword(length = 16): string {
  const pick = (set: string) => set[randomInt(set.length)]!;
  const all = PASSWORD_ALPHABETS.join('');
  const chars = PASSWORD_ALPHABETS.map(pick);
  while (chars.length < length) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}

/** A password input with show/hide, and optionally generate (spec part 1 §2.4). */
export function PasswordField({
  onGenerate,
  ...props
}: Omit<TextFieldProps, 'type' | 'adornment'> & { onGenerate?: (password: string) => void }) {
  const { t } = useTranslation();
  const [shown, setShown] = useState(false);
  return (
    <TextField
      {...props}
      type={shown ? 'text' : 'password'}
      spellCheck={false}
      autoCapitalize="off"
      adornment={
        <>
          {onGenerate && (
            <AdornmentButton
              label={t('password.generate')}
              testId={`generate-${props.name}`}
              onClick={() => {
                onGenerate(generatePassword());
                setShown(true);
              }}
            >
              <Icon name="dice" />
            </AdornmentButton>
          )}
          <AdornmentButton
            label={shown ? t('password.hide') : t('password.show')}
            pressed={shown}
            testId={`toggle-${props.name}`}
            onClick={() => setShown((s) => !s)}
          >
            <Icon name={shown ? 'eye-off' : 'eye'} />
          </AdornmentButton>
        </>
      }
    />
  );
}

/** The message of a failed form, announced to screen readers. */
export function FormError({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <div
      role="alert"
      data-testid="form-error"
      className="flex items-start gap-2 rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800"
    >
      <Icon name="error" className="mt-0.5 size-4 shrink-0" />
      <span>{message}</span>
    </div>
  );
}

export function Notice({
  kind,
  children,
  testId,
}: {
  kind: 'success' | 'info';
  children: ReactNode;
  testId?: string;
}) {
  const tone =
    kind === 'success'
      ? 'border-emerald-200 bg-emerald-50 text-emerald-900'
      : 'border-sky-200 bg-sky-50 text-sky-900';
  return (
    <div
      role="status"
      data-testid={testId}
      className={`flex items-start gap-2 rounded-md border px-3 py-2 text-sm ${tone}`}
    >
      <Icon name={kind === 'success' ? 'check' : 'info'} className="mt-0.5 size-4 shrink-0" />
      <div className="min-w-0">{children}</div>
    </div>
  );
}

/** "Loading…" with a spinner, announced to screen readers, while a screen or a panel waits for its data. */
export function Loading({ className = '' }: { className?: string }) {
  const { t } = useTranslation();
  return (
    <div role="status" className={`flex items-center gap-2 text-sm text-slate-500 ${className}`}>
      <Spinner />
      {t('layout.loading')}
    </div>
  );
}

/** A new password: browsers may suggest one, and the hint gives the least length (spec part 2 §5). */
export function NewPasswordField(props: Parameters<typeof PasswordField>[0]) {
  const { t } = useTranslation();
  return (
    <PasswordField
      autoComplete="new-password"
      required
      hint={t('password.hint', { min: Limits.password.min })}
      {...props}
    />
  );
}
