// Upload progress on stderr (stdout stays clean for --json): a bar redrawn in place on a
// terminal; on anything else (CI logs), one plain line every 10 % or 15 s at most.
import { formatBytes, formatSeconds } from './format.js';

export interface Progress {
  update(sent: number): void;
  done(): void;
}

export function progressReporter(label: string, total: number, stream: NodeJS.WriteStream = process.stderr, quiet = false): Progress {
  const started = Date.now();
  // The rate counts this run's bytes only: a resumed upload starts at its offset.
  let first: number | null = null;
  const rate = (sent: number) => (sent - (first ?? sent)) / Math.max(0.001, (Date.now() - started) / 1000);
  if (quiet) return { update() {}, done() {} };
  if (stream.isTTY) {
    let lastDraw = 0;
    const draw = (sent: number, force = false) => {
      const now = Date.now();
      if (!force && now - lastDraw < 100) return;
      lastDraw = now;
      const fraction = total === 0 ? 1 : Math.min(1, sent / total);
      const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - 60));
      const filled = Math.round(fraction * width);
      const speed = rate(sent);
      const eta = speed > 0 ? (total - sent) / speed : Infinity;
      const line = `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${formatBytes(sent)}/${formatBytes(total)} ${formatBytes(speed)}/s ETA ${formatSeconds(eta)}`;
      stream.write(`\r${line}\x1b[K`);
    };
    let last = 0;
    return {
      update(sent) {
        first ??= sent;
        last = sent;
        draw(sent);
      },
      done() {
        draw(last, true);
        stream.write('\n');
      },
    };
  }
  let nextPercent = 10;
  let lastLine = started;
  let last = 0;
  const line = (sent: number) => {
    lastLine = Date.now();
    const percent = total === 0 ? 100 : Math.floor((sent / total) * 100);
    stream.write(`${label}: ${percent}% (${formatBytes(sent)} of ${formatBytes(total)}, ${formatBytes(rate(sent))}/s)\n`);
  };
  return {
    update(sent) {
      first ??= sent;
      last = sent;
      const percent = total === 0 ? 100 : (sent / total) * 100;
      if (percent >= nextPercent || Date.now() - lastLine >= 15_000) {
        while (nextPercent <= percent) nextPercent += 10;
        if (sent < total) line(sent);
      }
    },
    done() {
      line(last);
    },
  };
}
