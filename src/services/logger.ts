// The slice of a pino logger the domain services use, so src/services does not depend on fastify
// (src/main passes the app's logger).
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
