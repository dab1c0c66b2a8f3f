/** The parser has no types of its own: it reads the Prometheus text format into metric families. */
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
