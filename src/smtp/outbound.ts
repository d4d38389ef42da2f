import { Readable } from 'node:stream';
import { parseSmtpReply, statusOfCode, type Handoff, type HandoffRequest, type RecipientResult, type SmtpAnswer } from '../core/outbound.js';
import { declareSmtpUtf8, envelopeAccepted, envelopeRejections, serverExtensions, type SMTPConnection, type SmtpError } from '../mime/nodemailer.js';
import { OutgoingMessage, type Prepared } from './outbound-message.js';
import { PolicyRefusal } from './mta-sts-session.js';
import { ConnectionPool, type ConnectionOptions, type PooledConnection } from './outbound-pool.js';

/** One transaction's outcome, or a reason to try the next host (nothing was handed over). */
type Attempt = { done: RecipientResult[] } | { retry: SmtpAnswer };

/** Errors where the server answered; everything else is the connection failing. */
const ANSWERED = new Set(['EENVELOPE', 'EMESSAGE']);

/**
 * Hands one domain's recipients to the next server with nodemailer's SMTP connection and
 * classifies the answer per recipient (docs/operators/delivery.md; RFC 5321 sections 4.2 and 6.1).
 */
export class SmtpHandoff implements Handoff {
  private readonly pool: ConnectionPool;

  constructor(options: ConnectionOptions) {
    this.pool = new ConnectionPool(options);
  }

  async deliver(request: HandoffRequest): Promise<RecipientResult[]> {
    const message = new OutgoingMessage(request);
    let last: SmtpAnswer = { diagnostic: 'no server to try' };
    for (const host of request.route.hosts) {
      let pooled: PooledConnection;
      try {
        pooled = await this.pool.acquire(request.route, host);
      } catch (error) {
        last = answerOfError(error as SmtpError, `${host.servername} [${host.host}]`);
        continue;
      }
      let attempt = await attemptOn(pooled, message, request.beforeData);
      if ('retry' in attempt && pooled.reused) {
        // The server closed the idle session meanwhile; nothing was handed over, so start fresh.
        this.pool.discard(pooled);
        try {
          pooled = await this.pool.acquire(request.route, host, { fresh: true });
          attempt = await attemptOn(pooled, message, request.beforeData);
        } catch (error) {
          last = answerOfError(error as SmtpError, `${host.servername} [${host.host}]`);
          continue;
        }
      }
      if ('done' in attempt) {
        this.settle(pooled, attempt.done);
        return attempt.done;
      }
      this.pool.discard(pooled);
      last = attempt.retry;
    }
    // RFC 5321 section 4.5.4.1: no server took the message; that is temporary.
    return request.recipients.map((recipient) => ({ recipient, status: 'deferred', ...temporary(last) }));
  }

  close(): Promise<void> {
    return this.pool.closeAll();
  }

  private settle(pooled: PooledConnection, results: RecipientResult[]): void {
    const clean = results.every((result) => result.status === 'delivered');
    if (clean) this.pool.release(pooled);
    else this.pool.discard(pooled);
  }
}

/**
 * Prepares the message for this server's extensions, then hands it over, or refuses it here.
 * The transaction speaks of recipients in their envelope form (ASCII domains); the results
 * name them as the request did.
 */
const attemptOn = async (pooled: PooledConnection, message: OutgoingMessage, beforeData?: BeforeData): Promise<Attempt> => {
  const preparation = await message.forServer(serverExtensions(pooled.connection), pooled.connection.host ?? 'the next server');
  if ('refused' in preparation) return { done: preparation.refused };
  const marked = beforeData && ((accepted: readonly string[]) => beforeData(accepted.map((recipient) => message.requestedAs(recipient))));
  const attempt = await transact(pooled, preparation.prepared, marked);
  if (!('done' in attempt)) return attempt;
  return { done: attempt.done.map((result) => ({ ...result, recipient: message.requestedAs(result.recipient) })) };
};

type BeforeData = NonNullable<HandoffRequest['beforeData']>;

const transact = (pooled: PooledConnection, prepared: Prepared, beforeData?: BeforeData): Promise<Attempt> =>
  new Promise((resolve) => {
    const { connection } = pooled;
    const recipients = prepared.envelope.to;
    const undeclare = prepared.smtpUtf8 ? declareSmtpUtf8(connection) : () => {};
    let handedOver = false;
    let started = false;
    let settled = false;
    // nodemailer pipes the message to the server only after it answered DATA with 354. When
    // MAIL, every RCPT or DATA itself was refused, it reports that first and then drains the
    // stream into nothing: that read is no handover. The caller's beforeData is awaited
    // before the first byte; if it fails, the message is not sent and nothing was handed over.
    const stream = new Readable({
      read() {
        if (started) return;
        started = true;
        if (settled) return void this.push(null);
        (beforeData?.(acceptedRecipients(connection, recipients)) ?? Promise.resolve()).then(
          () => {
            handedOver = true;
            this.push(prepared.message);
            this.push(null);
          },
          (error: unknown) => {
            finish({ retry: { diagnostic: `the DATA mark could not be recorded: ${error instanceof Error ? error.message : String(error)}` } });
            connection.close();
          },
        );
      },
    });
    const finish = (attempt: Attempt) => {
      settled = true;
      undeclare();
      connection.off('error', lost);
      connection.off('end', ended);
      resolve(attempt);
    };
    // nodemailer reports a lost connection or a timeout only as an 'error' or 'end' event.
    const lost = (error: SmtpError) => {
      const answer = answerOfError(error, connection.host);
      if (!handedOver) return finish({ retry: answer });
      // Lost or timed out after the content went out: the outcome is unknown (RFC 5321 section 6.1).
      const known = rejectionsOf(error, connection);
      finish({ done: recipients.map((recipient) => known.get(recipient.toLowerCase()) ?? { recipient, status: 'unresolved', ...answer }) });
    };
    const ended = () => lost(Object.assign(new Error('Connection closed unexpectedly'), { code: 'ECONNECTION' }));
    connection.once('error', lost);
    connection.once('end', ended);
    connection.send(prepared.envelope, stream, (error, info) => {
      if (!error) return finish({ done: fromInfo(recipients, info) });
      const smtpError = error as SmtpError;
      if (ANSWERED.has(smtpError.code ?? '')) return finish({ done: fromAnswer(recipients, smtpError, connection) });
      lost(smtpError);
    });
  });

const fromInfo = (recipients: string[], info: SMTPConnection.SentMessageInfo): RecipientResult[] => {
  const answer = parseSmtpReply(info.response);
  const rejected = new Map((info.rejectedErrors ?? []).map((error) => [String((error as SmtpError).recipient).toLowerCase(), error]));
  return recipients.map((recipient) => {
    const error = rejected.get(recipient.toLowerCase());
    return error ? resultOfReply(recipient, error) : { recipient, status: 'delivered', ...answer };
  });
};

/** The server refused MAIL, every RCPT, DATA or the content: each recipient gets its answer. */
const fromAnswer = (recipients: string[], error: SmtpError, connection: SMTPConnection): RecipientResult[] => {
  const known = rejectionsOf(error, connection);
  return recipients.map((recipient) => known.get(recipient.toLowerCase()) ?? resultOfReply(recipient, error));
};

/** The recipients the server accepted at RCPT, all of them if unknown. */
const acceptedRecipients = (connection: SMTPConnection, recipients: string[]): string[] => envelopeAccepted(connection) ?? recipients;

/**
 * Per-RCPT refusals. nodemailer hands them over on success and when all were refused; when
 * DATA fails after some were accepted, they are only in its envelope state.
 */
const rejectionsOf = (error: SmtpError, connection: SMTPConnection): Map<string, RecipientResult> => {
  const errors = error.rejectedErrors ?? envelopeRejections(connection);
  return new Map(errors.filter((item) => item.recipient).map((item) => [String(item.recipient).toLowerCase(), resultOfReply(String(item.recipient), item)]));
};

const resultOfReply = (recipient: string, error: SmtpError): RecipientResult => {
  if (!error.response) {
    // nodemailer refused locally (message over the advertised SIZE): a permanent failure.
    return { recipient, status: 'failed', smtpCode: 552, enhancedCode: '5.3.4', diagnostic: error.message };
  }
  const answer = parseSmtpReply(error.response);
  return { recipient, status: answer.smtpCode ? statusOfCode(answer.smtpCode) : 'deferred', ...answer };
};

const answerOfError = (error: SmtpError, where: string): SmtpAnswer => {
  if (error instanceof PolicyRefusal) return error.answer;
  if (error.response) return parseSmtpReply(error.response);
  return { diagnostic: `${where}: ${error.code ?? 'error'} ${error.message}`.slice(0, 500) };
};

/** A deferral never carries a 5xx code: a refused greeting on every host is still worth retrying. */
const temporary = (answer: SmtpAnswer): SmtpAnswer => {
  if (answer.smtpCode !== undefined && answer.smtpCode >= 400 && answer.smtpCode < 500) return answer;
  return { diagnostic: answer.diagnostic };
};
