// The iOS pipeline's helper thread: resource hashing for the re-signer, read-back for the verifier.
export { HelperThread } from './helper-thread.ts';
