// Worker-thread entry of the Mach-O signing pool (piscina): signs one file and hands the result
// back by transferring its two buffers, so nothing large is copied across threads.
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { runMachOJob, type MachOJob } from './macho-job.ts';

export default function signInWorker(job: MachOJob): unknown {
  const result = runMachOJob(job);
  const transfer = result.input === result.fresh ? [result.input] : [result.input, result.fresh];
  // piscina transfers what a moved Transferable lists and delivers its value.
  return move({ [transferableSymbol]: transfer, [valueSymbol]: result } as unknown as ArrayBuffer);
}
