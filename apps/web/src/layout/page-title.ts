import { useEffect } from 'react';
import { atom, useSetAtom } from 'jotai';

export const pageTitleAtom = atom('');

/** Sets the top bar's title and the document title. */
export function usePageTitle(title: string): void {
  const setTitle = useSetAtom(pageTitleAtom);
  useEffect(() => {
    setTitle(title);
    document.title = title ? `${title} · Lintel` : 'Lintel';
  }, [title, setTitle]);
}
