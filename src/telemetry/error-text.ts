/**
 * Error text stays out of exported spans unless content capture is on. Temporal's own spans
 * (`RunActivity`, `RunWorkflow`, `StartActivity`, …) record a failure's message as the span status
 * and as an `exception` event with its stack; a model call's failure message quotes the provider's
 * error, which can echo the prompt or a key. Without the content opt-in every span leaves with the
 * error's type only: the status message is the `error.type` (or the exception's type), and
 * `exception` events keep `exception.type` but lose `exception.message` and `exception.stacktrace`.
 */
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace-base';

const TEXT_KEYS = ['exception.message', 'exception.stacktrace'];

/** Wraps an exporter so that the spans it sends carry no error text (see the module comment). */
export class ErrorTextFreeExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans.map(withoutErrorText), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The span as it is when it holds no error text, else a view of it without that text. */
export function withoutErrorText(span: ReadableSpan): ReadableSpan {
  const exceptions = span.events.filter(isExceptionWithText);
  if (!span.status.message && exceptions.length === 0) return span;
  const errorType = span.attributes['error.type'];
  const exceptionType = span.events.find((e) => e.name === 'exception')?.attributes?.['exception.type'];
  const shown = typeof errorType === 'string' ? errorType : typeof exceptionType === 'string' ? exceptionType : 'error';
  // A view over the span (its prototype): the exporter reads the same span, with these two fields replaced.
  const view = Object.create(span) as ReadableSpan;
  Object.defineProperty(view, 'status', {
    value: { ...span.status, ...(span.status.message ? { message: shown } : {}) },
    enumerable: true,
  });
  Object.defineProperty(view, 'events', {
    value: span.events.map((e) => (isExceptionWithText(e) ? withoutText(e) : e)),
    enumerable: true,
  });
  return view;
}

function isExceptionWithText(event: TimedEvent): boolean {
  return event.name === 'exception' && TEXT_KEYS.some((key) => event.attributes?.[key] !== undefined);
}

function withoutText(event: TimedEvent): TimedEvent {
  const attributes = { ...event.attributes };
  for (const key of TEXT_KEYS) delete attributes[key];
  return { ...event, attributes };
}
