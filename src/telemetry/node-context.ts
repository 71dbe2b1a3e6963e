import * as otel from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The active span follows async calls in the worker through AsyncLocalStorage. Temporal's activity
 * interceptor reads the workflow's span from the activity's headers and makes it active; without a
 * context manager every activity span would start a trace of its own.
 */
class AsyncLocalStorageContextManager implements otel.ContextManager {
  private readonly storage = new AsyncLocalStorage<otel.Context>();

  active(): otel.Context {
    return this.storage.getStore() ?? otel.ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: otel.Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const cb = thisArg == null ? fn : fn.bind(thisArg);
    return this.storage.run(context, cb, ...args);
  }

  bind<T>(context: otel.Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(context, () => fn(...args))) as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

let installed = false;

/**
 * Gives the process a context manager and the W3C trace-context propagator, unless the program
 * embedding the worker registered its own (then theirs is used: the OTel API keeps the first).
 */
export function ensureNodeContext(): void {
  if (installed) return;
  installed = true;
  // The API logs through diag and returns false when one is already registered; either way works.
  otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}
