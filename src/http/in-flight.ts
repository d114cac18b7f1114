// Uploads in progress, so a shutdown can abort them cleanly (their partial blobs are deleted by
// the blob store) instead of waiting for gigabytes to finish arriving.
import { AppError } from '../errors.ts';

export class InFlight {
  private readonly controllers = new Set<AbortController>();
  private closing = false;

  begin(): AbortController {
    if (this.closing) throw new AppError('service_unavailable', 'The service is shutting down.');
    const controller = new AbortController();
    this.controllers.add(controller);
    return controller;
  }

  end(controller: AbortController): void {
    this.controllers.delete(controller);
  }

  get size(): number {
    return this.controllers.size;
  }

  /** Refuses new uploads and aborts the running ones with service_unavailable. */
  abortAll(): void {
    this.closing = true;
    for (const controller of this.controllers) controller.abort(new AppError('service_unavailable', 'The service is shutting down; upload again.'));
  }
}
