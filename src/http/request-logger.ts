// fastify gives every request a child logger bound to its id, and pino's child() writes those
// bindings out as JSON text at once (about 1 µs a request, measured), though a request that goes
// well logs nothing but its access line (http/access-log.ts, written through the root logger with
// the id in it). So each request gets this stand-in, and the real child is made the first time the
// request logs at a level that is on.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn, Logger } from 'pino';

class LazyRequestLogger {
  private made: Logger | null = null;

  constructor(private readonly parent: Logger, private readonly given: Bindings) {}

  private real(): Logger {
    return (this.made ??= this.parent.child(this.given));
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  fatal(...args: Parameters<LogFn>): void {
    if (this.isLevelEnabled('fatal')) this.real().fatal(...args);
  }

  error(...args: Parameters<LogFn>): void {
    if (this.isLevelEnabled('error')) this.real().error(...args);
  }

  warn(...args: Parameters<LogFn>): void {
    if (this.isLevelEnabled('warn')) this.real().warn(...args);
  }

  info(...args: Parameters<LogFn>): void {
    if (this.isLevelEnabled('info')) this.real().info(...args);
  }

  debug(...args: Parameters<LogFn>): void {
    if (this.isLevelEnabled('debug')) this.real().debug(...args);
  }

  trace(...args: Parameters<LogFn>): void {
    if (this.isLevelEnabled('trace')) this.real().trace(...args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }

  bindings(): Bindings {
    return this.real().bindings();
  }
}

/** fastify's childLoggerFactory: the stand-in, unless the route sets its own level or serializers */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  // the app's logger is pino's (app.ts)
  return new LazyRequestLogger(logger as Logger, bindings) as unknown as FastifyBaseLogger;
}
