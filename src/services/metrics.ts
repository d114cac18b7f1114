// Prometheus metrics (prom-client): one registry per running service, so tests and several
// services in one process never share counters. Services report through the small methods here;
// the HTTP layer serves `registry` at /metrics (off unless SIGNET_METRICS_TOKEN is set).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSources {
  /** Tasks per status across accounts (read at scrape time). */
  taskCounts: () => Promise<Record<string, number>>;
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly signingDuration: Histogram<'platform' | 'cert_type' | 'outcome'>;
  readonly uploadBytes: Counter<'platform'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  readonly refusals: Counter<'limit'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'signet_' });
    this.httpDuration = new Histogram({
      name: 'signet_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.signingDuration = new Histogram({
      name: 'signet_signing_duration_seconds',
      help: 'Duration of signing runs by platform, certificate type and outcome.',
      labelNames: ['platform', 'cert_type', 'outcome'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    });
    this.uploadBytes = new Counter({ name: 'signet_upload_bytes_total', help: 'Bytes of packages received and stored.', labelNames: ['platform'], registers });
    this.webhookDeliveries = new Counter({ name: 'signet_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome.', labelNames: ['outcome'], registers });
    this.refusals = new Counter({
      name: 'signet_rate_limit_refusals_total',
      help: 'Requests refused by a rate limit, connection cap or body-speed limit.',
      labelNames: ['limit'],
      registers,
    });
    const tasks = new Gauge({
      name: 'signet_tasks',
      help: 'Tasks by state.',
      labelNames: ['state'],
      registers,
      async collect() {
        for (const [state, count] of Object.entries(await sources.taskCounts())) this.set({ state }, count);
      },
    });
    void tasks;
    new Gauge({
      name: 'signet_queue_depth',
      help: 'Signing tasks waiting for a worker (pending).',
      registers,
      async collect() {
        this.set((await sources.taskCounts()).pending ?? 0);
      },
    });
  }
}
