// The two-core floor's dispatcher (bench/floor.ts): hands the tasks on each slab to the workers
// in batches, and tells the main thread what to write and when a slab is free again.
import type { Worker } from 'node:worker_threads';
import type { Entry, Slab } from './floor-slabs.ts';
import { cost, type ReadTask, type Task } from './floor-work.ts';

// Work sent to a worker at once (compressed bytes of small entries; a larger entry goes alone).
const BATCH = 1024 * 1024;
// ... and at most this many (a last batch of a thousand tiny entries would run alone).
const BATCH_TASKS = 128;

export interface DispatcherEvents {
  /** Entries of `slab` a worker found unchanged. */
  unchanged(slab: Slab, entries: Entry[]): void;
  /** A rewritten entry, ready to write: its local header and new data. */
  rewritten(header: Uint8Array, pieces: Uint8Array[]): void;
  /** Every task on `slab` is done (and the writes of its bytes queued). */
  slabDone(slab: Slab): void;
}

/**
 * Hands tasks to the workers as they come (add), in batches of about BATCH bytes (a large entry
 * alone): one message per small entry would leave both workers idle for a round trip each,
 * thousands of times over.
 */
export class Dispatcher {
  readonly #workers: Worker[];
  readonly #slabs: ReadonlyMap<number, Slab>;
  readonly #events: DispatcherEvents;
  readonly #idle: Set<Worker>;
  readonly #queue: Task[] = [];
  readonly #finished = Promise.withResolvers<void>();
  // Pieces of streamed entries being deflated (deflate), and who waits for the workers to be idle.
  readonly #deflating = new Map<number, PromiseWithResolvers<Uint8Array>>();
  #drainWaiters: Array<() => void> = [];
  /** Each busy worker's batch. */
  readonly #sent = new Map<Worker, Task[]>();
  #nextId = 0;
  #adding = true;

  constructor(workers: Worker[], slabs: ReadonlyMap<number, Slab>, events: DispatcherEvents) {
    this.#workers = workers;
    this.#slabs = slabs;
    this.#events = events;
    this.#idle = new Set(workers);
    for (const w of workers) {
      w.on('error', (error) => this.#finished.reject(error));
      w.on('message', (message: { rewrites: Array<[string, Uint8Array[]]>; deflated: Array<{ id: number; piece: Uint8Array }> }) => {
        this.#idle.add(w);
        const batch = this.#sent.get(w)!;
        this.#sent.delete(w);
        this.#results(batch, new Map(message.rewrites), message.deflated);
        this.#dispatch();
      });
    }
  }

  /** The tasks on a slab just read. */
  add(slab: Slab, tasks: ReadTask[]): void {
    slab.tasksLeft = tasks.length;
    if (tasks.length === 0) this.#events.slabDone(slab);
    this.#queue.push(...tasks);
    this.#dispatch();
  }

  /** Deflates a piece in shared memory on a worker (floor-stream.ts), after the tasks queued before it. */
  deflate(piece: Buffer): Promise<Uint8Array> {
    const id = this.#nextId++;
    const done = Promise.withResolvers<Uint8Array>();
    this.#deflating.set(id, done);
    this.#queue.push({ type: 'deflate', piece, id });
    this.#dispatch();
    return done.promise;
  }

  /** Resolves once every task handed over so far is done (and its events fired). */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      this.#drainWaiters.push(resolve);
      this.#dispatch();
    });
  }

  /** Resolves once every task added is done. */
  async finish(): Promise<void> {
    this.#adding = false;
    this.#dispatch();
    await this.#finished.promise;
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #results(batch: Task[], rewrites: Map<string, Uint8Array[]>, deflated: Array<{ id: number; piece: Uint8Array }>): void {
    const unchanged = new Map<Slab, Entry[]>();
    for (const task of batch) {
      if (task.type !== 'entry') continue;
      const slab = this.#slabs.get(task.slab)!;
      const pieces = rewrites.get(task.entry.name);
      if (pieces !== undefined) this.#events.rewritten(slab.bytes.subarray(task.entry.headerOffset - slab.start, task.entry.dataOffset - slab.start), pieces);
      else if (unchanged.has(slab)) unchanged.get(slab)!.push(task.entry);
      else unchanged.set(slab, [task.entry]);
    }
    for (const [slab, entries] of unchanged) this.#events.unchanged(slab, entries);
    for (const task of batch) {
      if (task.type === 'deflate') continue;
      const slab = this.#slabs.get(task.slab)!;
      slab.tasksLeft -= 1;
      if (slab.tasksLeft === 0) this.#events.slabDone(slab);
    }
    // Pieces of streamed entries (deflate), each awaited by the stream that sent it.
    for (const { id, piece } of deflated) {
      this.#deflating.get(id)!.resolve(piece);
      this.#deflating.delete(id);
    }
  }

  #dispatch(): void {
    for (const w of [...this.#idle]) {
      const tasks = this.#batch();
      if (tasks.length === 0) break;
      this.#idle.delete(w);
      this.#sent.set(w, tasks);
      const slabs = new Map<number, SharedArrayBuffer>();
      for (const task of tasks) if (task.type !== 'deflate') slabs.set(task.slab, this.#slabs.get(task.slab)!.memory);
      // Slabs and pieces are shared memory: posted, not copied.
      w.postMessage({ tasks, slabs: [...slabs] });
    }
    if (this.#queue.length > 0 || this.#idle.size < this.#workers.length) return;
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
    if (!this.#adding) this.#finished.resolve();
  }

  #batch(): Task[] {
    const taken: Task[] = [];
    let bytes = 0;
    while (this.#queue.length > 0 && (taken.length === 0 || (bytes + cost(this.#queue[0]!) <= BATCH && taken.length < BATCH_TASKS))) {
      const task = this.#queue.shift()!;
      bytes += cost(task);
      taken.push(task);
    }
    return taken;
  }
}
