/** The parts of parse-prometheus-text-format (untyped upstream) the metrics tests read. */
declare module 'parse-prometheus-text-format' {
  export interface PrometheusSample {
    labels?: Record<string, string>;
    /** Counters, gauges and untyped samples. */
    value?: string;
    /** Histograms: upper bound → cumulative count. */
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }

  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PrometheusSample[];
  }

  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
