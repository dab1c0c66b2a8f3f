/** The few glyphs of the table (16px grid, stroke), kept here so the table needs nothing from elsewhere. */
const paths = {
  'arrow-up': 'M8 13V3M4 7l4-4 4 4',
  'arrow-down': 'M8 3v10M4 9l4 4 4-4',
  'sort-none': 'M5 6l3-3 3 3M5 10l3 3 3-3',
  plus: 'M8 3v10M3 8h10',
  filter: 'M2 3h12L9.5 8.5V13l-3-1.5v-3L2 3Z',
  columns: 'M2.5 3h11v10h-11V3ZM6.5 3v10M9.5 3v10',
  close: 'm4 4 8 8M12 4l-8 8',
  reload: 'M13 8a5 5 0 1 1-1.5-3.5M13 2.5V5h-2.5',
  download: 'M8 2.5v8M4.5 7 8 10.5 11.5 7M3 13.5h10',
  code: 'M5.5 4.5 2 8l3.5 3.5M10.5 4.5 14 8l-3.5 3.5',
  search: 'M7 12a5 5 0 1 0 0-10 5 5 0 0 0 0 10ZM14 14l-3.5-3.5',
  error: 'M8 1.5a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13ZM8 4.5v4M8 11h.01',
  check: 'm3 8.5 3 3 7-7',
  inbox: 'M2 9.5 4 3h8l2 6.5V13H2V9.5ZM2 9.5h3.5L6.5 11h3l1-1.5H14',
} as const;

export type TableIconName = keyof typeof paths;

export function TableIcon({ name, className = 'size-3.5' }: { name: TableIconName; className?: string }) {
  return (
    <svg
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.6}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      className={className}
    >
      <path d={paths[name]} />
    </svg>
  );
}
