import type { Router } from '@koa/router';
import type { ServerResponse } from 'node:http';
import type { AppError } from '../../core/errors.js';
import { validateInput } from '../../core/validate.js';
import type { SubscribableEvent } from '../../core/webhooks.js';
import { KEY_CLOSED_ERROR, type EventStream } from '../../services/events/streams.js';
import { principalOf, requireAuth } from '../auth.js';
import type { HttpDeps } from '../context.js';

interface EventsQuery {
  events: string;
  lastEventId?: string;
}

/** Events written per read of the log; a slow client gets the next batch on 'drain'. */
const BATCH = 200;
/** EventSource's reconnection delay (HTML, server-sent events: the retry field). */
const RETRY_MS = 2000;

/**
 * GET /api/v1/agent/events: Server-Sent Events (HTML Living Standard, section 9.2). Each
 * event has the webhook's id (the `id:` field, which a client sends back as Last-Event-ID),
 * its type (`event:`) and the webhook's exact JSON body (`data:`). A comment line keeps an
 * idle stream alive every events.heartbeatSeconds.
 */
export const eventRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  router.get('/api/v1/agent/events', requireAuth(services.auth), async (ctx) => {
    const query = validateInput<EventsQuery>('events-query.json', { ...ctx.query }, { coerce: true });
    const header = ctx.get('last-event-id').trim();
    let wake = (): void => {};
    let end = (_error: AppError): void => {};
    const stream = await services.eventStreams.open(
      principalOf(ctx),
      {
        lastEventId: header !== '' ? header : query.lastEventId,
        types: [...new Set(query.events.split(','))] as SubscribableEvent[],
      },
      { wake: () => wake(), end: (error) => end(error) },
    );
    ctx.respond = false;
    const res = ctx.res;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    res.write(`retry: ${RETRY_MS}\n\n`);
    wake = pumpInto(res, stream);
    end = (error) => {
      // The REST error body, as an `error` event; the client's reconnect then gets the 401.
      if (!res.destroyed) res.end(`event: error\ndata: ${JSON.stringify({ error: error.message, code: error.code })}\n\n`);
    };
    // A key can also stop working by time alone (its expiresAt passes): checked at each heartbeat.
    const heartbeat = setInterval(() => {
      stream.keyStillValid().then(
        (valid) => {
          if (!valid) end(KEY_CLOSED_ERROR);
          else if (!res.writableNeedDrain) res.write(': heartbeat\n\n');
        },
        () => res.destroy(),
      );
    }, deps.events.heartbeatMs);
    res.once('close', () => {
      clearInterval(heartbeat);
      stream.close();
    });
    wake();
  });
};

/**
 * Writes what the log has after the stream's cursor; waits for 'drain' instead of buffering.
 * One pump at a time: a wake during a pump makes it look again when it ends, so two reads of
 * the log never race for the same cursor.
 */
const pumpInto = (res: ServerResponse, stream: EventStream): (() => void) => {
  let draining = false;
  let pumping = false;
  let again = false;
  const pump = async (): Promise<void> => {
    while (!draining && !res.destroyed) {
      const events = await stream.next(BATCH);
      if (events.length === 0) return;
      const frames = events.map((event) => `id: ${event.id}\nevent: ${event.type}\ndata: ${event.body}\n\n`).join('');
      if (!res.write(frames)) {
        draining = true;
        res.once('drain', () => {
          draining = false;
          wake();
        });
      }
    }
  };
  const wake = (): void => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    again = false;
    pump().then(
      () => {
        pumping = false;
        if (again) wake();
      },
      () => res.destroy(),
    );
  };
  return wake;
};
