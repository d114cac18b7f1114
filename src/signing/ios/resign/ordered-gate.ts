// A semaphore whose tickets are taken in a fixed order: job i gets a slot only after every job
// before it has one. With slots released only once a job's output is written (in the same order),
// at most `limit` finished-but-unwritten outputs exist — memory stays bounded — and the output
// order never depends on which worker finishes first, so the .ipa is deterministic.
export class OrderedGate {
  private readonly limit: number;
  private active = 0;
  private nextTicket = 0;
  private readonly waiting = new Map<number, () => void>();

  constructor(limit: number) {
    this.limit = Math.max(1, limit);
  }

  acquire(ticket: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.set(ticket, resolve);
      this.pump();
    });
  }

  release(): void {
    this.active--;
    this.pump();
  }

  private pump(): void {
    while (this.active < this.limit) {
      const resolve = this.waiting.get(this.nextTicket);
      if (resolve === undefined) return;
      this.waiting.delete(this.nextTicket);
      this.nextTicket++;
      this.active++;
      resolve();
    }
  }
}
