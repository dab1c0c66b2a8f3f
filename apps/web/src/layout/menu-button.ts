import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';

/**
 * A button of the top bar that opens a menu (WAI-ARIA menu button): the first item takes focus on opening;
 * ↓ on the button opens it; in the menu ↑ ↓ Home End move, Esc closes back to the button, Tab closes and
 * moves on; a pointer press outside closes it. `onClosed` runs whenever an opened menu closes.
 */
export function useMenuButton(opts: { onClosed?: () => void } = {}) {
  const [open, setOpen] = useState(false);
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const menuId = useId();
  const onClosed = useRef(opts.onClosed);
  onClosed.current = opts.onClosed;

  const items = () => [
    ...(menuRef.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not([disabled])') ?? []),
  ];

  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
    const onPointer = (e: PointerEvent) => {
      if (!rootRef.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      onClosed.current?.();
    };
  }, [open]);

  function close(focusButton = true) {
    setOpen(false);
    if (focusButton) buttonRef.current?.focus();
  }

  function onMenuKey(e: KeyboardEvent) {
    const list = items();
    const at = list.indexOf(document.activeElement as HTMLElement);
    const go = (i: number) => list[(i + list.length) % list.length]?.focus();
    if (e.key === 'ArrowDown') go(at + 1);
    else if (e.key === 'ArrowUp') go(at - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(list.length - 1);
    else if (e.key === 'Escape') close();
    else if (e.key === 'Tab') close(false);
    else return;
    if (e.key !== 'Tab') e.preventDefault();
  }

  /** the button's props besides its look: `toggle` is what a click does */
  const buttonProps = (toggle: () => void) => ({
    ref: buttonRef,
    type: 'button' as const,
    'aria-haspopup': 'menu' as const,
    'aria-expanded': open,
    'aria-controls': open ? menuId : undefined,
    onClick: toggle,
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key === 'ArrowDown' && !open) {
        e.preventDefault();
        toggle();
      }
    },
  });

  return { open, setOpen, close, rootRef, menuRef, menuId, onMenuKey, buttonProps };
}
