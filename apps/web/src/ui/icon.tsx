import type { IconName } from '@lintel/commands';
/** A small inline icon set (16px grid, stroke icons) so the console needs no icon package. */
const paths = {
  error: 'M8 1.5a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13ZM8 4.5v4M8 11h.01',
  warning: 'M8 2 1.5 13.5h13L8 2ZM8 6.5v3.5M8 12h.01',
  check: 'm3 8.5 3 3 7-7',
  info: 'M8 1.5a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13ZM8 7v4.5M8 4.5h.01',
  close: 'm4 4 8 8M12 4l-8 8',
  eye: 'M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8ZM8 10a2 2 0 1 0 0-4 2 2 0 0 0 0 4Z',
  'eye-off':
    'M2 2l12 12M6.6 6.6a2 2 0 0 0 2.8 2.8M4.2 4.7C2.5 5.9 1.5 8 1.5 8S4 12.5 8 12.5c1.3 0 2.5-.4 3.5-1M7 3.6c.3 0 .7-.1 1-.1 4 0 6.5 4.5 6.5 4.5s-.5 1-1.5 2.1',
  dice: 'M3 2.5h10a.5.5 0 0 1 .5.5v10a.5.5 0 0 1-.5.5H3a.5.5 0 0 1-.5-.5V3a.5.5 0 0 1 .5-.5ZM5.5 5.5h.01M10.5 5.5h.01M8 8h.01M5.5 10.5h.01M10.5 10.5h.01',
  'chevron-down': 'm4 6 4 4 4-4',
  'chevron-right': 'm6 4 4 4-4 4',
  logout: 'M6 2.5H3a.5.5 0 0 0-.5.5v10a.5.5 0 0 0 .5.5h3M10.5 11 13.5 8l-3-3M13.5 8H6',
  home: 'M2 7.5 8 2.5l6 5M3.5 6.5V13.5h3.5V10h2v3.5h3.5V6.5',
  building: 'M3 14V2.5h7V14M10 6h3v8M1.5 14h13M5 5h1M7.5 5h.01M5 7.5h1M7.5 7.5h.01M5 10h1M7.5 10h.01',
  swap: 'M2.5 5h10l-2.5-2.5M13.5 11h-10L6 13.5',
  mail: 'M2 3.5h12v9H2v-9ZM2 4l6 5 6-5',
  user: 'M8 8a3 3 0 1 0 0-6 3 3 0 0 0 0 6ZM2.5 14c.5-3 2.8-4.5 5.5-4.5s5 1.5 5.5 4.5',
  users:
    'M6 7.5a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5ZM1.5 13.5c.4-2.5 2.2-3.7 4.5-3.7s4.1 1.2 4.5 3.7M10.5 2.7a2.5 2.5 0 0 1 0 4.6M12 9.9c1.4.4 2.3 1.6 2.5 3.6',
  shield: 'M8 1.5 2.5 3.5v4c0 3.3 2.3 5.8 5.5 7 3.2-1.2 5.5-3.7 5.5-7v-4L8 1.5ZM5.5 8l2 2 3-3.5',
  list: 'M5.5 4h8M5.5 8h8M5.5 12h8M2.5 4h.01M2.5 8h.01M2.5 12h.01',
  plus: 'M8 3v10M3 8h10',
  search: 'M7 12a5 5 0 1 0 0-10 5 5 0 0 0 0 10ZM10.5 10.5 14 14',
  trash: 'M2.5 4h11M6 4V2.5h4V4M4 4l.7 9.5h6.6L12 4M6.5 6.5v4.5M9.5 6.5v4.5',
  key: 'M10 9.5a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7ZM7.5 8.5 2 14M4 12l1.5 1.5M5.5 10.5 7 12',
  tree: 'M2.5 2.5h4v3h-4zM6.5 4h3M9.5 2.5h4v3h-4zM4.5 5.5v6h5M9.5 10h4v3h-4z',
  table: 'M2 3h12v10H2zM2 6.5h12M2 10h12M6 3v10',
  keyboard: 'M1.5 4h13v8h-13zM4 6.5h.01M6.5 6.5h.01M9 6.5h.01M11.5 6.5h.01M5 9.5h6',
  command:
    'M5.5 2.5a2 2 0 1 0 0 4h5a2 2 0 1 0 0-4 2 2 0 0 0-2 2v7a2 2 0 1 0 2-2h-5a2 2 0 1 0 0 4 2 2 0 0 0 2-2v-7a2 2 0 0 0-2-2Z',
  send: 'M14 2 7 9M14 2l-4.5 12L7 9 2 6.5 14 2Z',
  'arrow-left': 'M13 8H3M7 4 3 8l4 4',
  refresh: 'M13.5 8a5.5 5.5 0 1 1-1.6-3.9M13.5 2.5v3h-3',
  download: 'M8 2.5v8M4.5 7 8 10.5 11.5 7M3 13.5h10',
  lock: 'M4 7.5h8v6H4zM5.5 7.5V5a2.5 2.5 0 0 1 5 0v2.5',
  device: 'M4.5 1.5h7v13h-7zM6.5 4h3M8 7.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3ZM7 12.5h2',
  wand: 'M2.5 13.5l8-8M9 3l.5 1.5L11 5l-1.5.5L9 7l-.5-1.5L7 5l1.5-.5L9 3ZM12.5 8.5l.3.9.9.3-.9.3-.3.9-.3-.9-.9-.3.9-.3.3-.9Z',
  'arrow-up': 'M8 13V3M4 7l4-4 4 4',
  'arrow-down': 'M8 3v10M4 9l4 4 4-4',
  filter: 'M2 3h12L9.5 8.5V13l-3-1.5v-3L2 3Z',
  columns: 'M2.5 3h11v10h-11V3ZM6.5 3v10M9.5 3v10',
  code: 'M5.5 4.5 2 8l3.5 3.5M10.5 4.5 14 8l-3.5 3.5',
  inbox: 'M2 9.5 4 3h8l2 6.5V13H2V9.5ZM2 9.5h3.5L6.5 11h3l1-1.5H14',
  phone:
    'M3.5 2h2.3l1 3-1.4 1a7.5 7.5 0 0 0 4.1 4.1l1-1.4 3 1v2.3a1 1 0 0 1-1 1A11 11 0 0 1 2.5 3a1 1 0 0 1 1-1Z',
  certificate:
    'M2.5 2.5h11v8h-5M4.5 5h7M4.5 7.5h4M5 10.5a1.75 1.75 0 1 0 0-.01M3.8 11.8 3.3 14.5 5 13.6l1.7.9-.5-2.7',
  upload: 'M8 10.5v-8M4.5 6 8 2.5 11.5 6M3 13.5h10',
  copy: 'M5.5 5.5h8v8h-8zM10.5 5.5v-3h-8v8h3',
  bell: 'M4 11V7a4 4 0 0 1 8 0v4l1.5 1.5h-11L4 11ZM6.5 13.5a1.5 1.5 0 0 0 3 0',
  alarm: 'M8 2 1.5 13.5h13L8 2ZM8 6.5v3.5M8 12h.01',
  chat: 'M2.5 3h11v7.5h-6L4.5 13v-2.5h-2V3Z',
  // the web dialer
  'phone-locked':
    'M3.5 2h2.3l1 3-1.4 1a7.5 7.5 0 0 0 4.1 4.1l1-1.4 3 1v2.3a1 1 0 0 1-1 1A11 11 0 0 1 2.5 3a1 1 0 0 1 1-1ZM10 3.5h4v3h-4zM10.8 3.5V2.7a1.2 1.2 0 0 1 2.4 0v.8',
  'phone-off':
    'M3.5 2h2.3l1 3-1.4 1a7.5 7.5 0 0 0 4.1 4.1l1-1.4 3 1v2.3a1 1 0 0 1-1 1A11 11 0 0 1 2.5 3a1 1 0 0 1 1-1ZM2 14 14 2',
  'phone-end': 'M1.5 9.5c3.6-3.3 9.4-3.3 13 0l-1.3 2-2.7-1.1V8.6a8 8 0 0 0-5 0v1.8l-2.7 1.1-1.3-2Z',
  'phone-in':
    'M10 2v4h4M14.5 1.5 10 6M3.5 2h1.8l1 3-1.4 1a7.5 7.5 0 0 0 4.1 4.1l1-1.4 3 1v1.8a1 1 0 0 1-1 1A10.5 10.5 0 0 1 2.5 3a1 1 0 0 1 1-1Z',
  'phone-out':
    'M14 6V2h-4M9.5 6.5l4.5-4.5M3.5 2h1.8l1 3-1.4 1a7.5 7.5 0 0 0 4.1 4.1l1-1.4 3 1v1.8a1 1 0 0 1-1 1A10.5 10.5 0 0 1 2.5 3a1 1 0 0 1 1-1Z',
  mic: 'M8 1.5a2 2 0 0 0-2 2V8a2 2 0 0 0 4 0V3.5a2 2 0 0 0-2-2ZM4 7.5a4 4 0 0 0 8 0M8 11.5v3',
  'mic-off': 'M8 1.5a2 2 0 0 0-2 2V8a2 2 0 0 0 4 0V3.5a2 2 0 0 0-2-2ZM4 7.5a4 4 0 0 0 8 0M8 11.5v3M2 2l12 12',
  volume: 'M2 6h2.5L8 3v10l-3.5-3H2V6ZM10.5 5.5a3.5 3.5 0 0 1 0 5M12.5 3.5a6 6 0 0 1 0 9',
  'volume-off': 'M2 6h2.5L8 3v10l-3.5-3H2V6ZM10.5 6l4 4M14.5 6l-4 4',
  pause: 'M5 3v10M11 3v10',
  play: 'M4.5 2.5v11l9-5.5-9-5.5Z',
  door: 'M3.5 14V2h8v12M2 14h12M9 8h.01',
  video: 'M1.5 4h9v8h-9zM10.5 7l4-2.5v7l-4-2.5',
  backspace: 'M5 3h9v10H5L1.5 8 5 3ZM7.5 6l4 4M11.5 6l-4 4',
} as const satisfies Record<IconName, string>; // exactly the vocabulary's names (packages/commands)

export type { IconName };

export function Icon({ name, className = 'size-4' }: { name: IconName; className?: string }) {
  return (
    <svg
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.5}
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

export function Spinner({ className = 'size-4' }: { className?: string }) {
  return (
    <svg viewBox="0 0 16 16" aria-hidden="true" focusable="false" className={`animate-spin ${className}`}>
      <circle cx="8" cy="8" r="6" fill="none" stroke="currentColor" strokeOpacity={0.25} strokeWidth={2} />
      <path d="M14 8a6 6 0 0 0-6-6" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" />
    </svg>
  );
}
