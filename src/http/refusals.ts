import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** What the parser's failure is answered with: the status line and the REST error body. */
interface Refusal {
  status: number;
  reason: string;
  code: string;
  message: string;
}

const refusalOf = (error: NodeJS.ErrnoException): Refusal => {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'Request Header Fields Too Large', code: 'too_large', message: 'the request headers are over the size limit' };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', code: 'invalid_input', message: 'the request did not arrive in time' };
  }
  return {
    status: 400,
    reason: 'Bad Request',
    code: 'invalid_input',
    message: 'malformed HTTP request (RFC 9112): a control character, a raw space or a byte above 0x7e in the request line, or a malformed header',
  };
};

/**
 * The HTTP listener's 'clientError': a request Node's parser cannot read (RFC 9112 forbids
 * raw spaces, control characters and non-ASCII bytes in the request target, malformed
 * header names and values, conflicting lengths) reaches no route, and Node would answer a
 * bare `400 Bad Request` without a body. It gets the REST error body `{error, code}` instead,
 * as every other failure (schema/openapi.json), and the connection closes.
 */
export const answerMalformedRequest = (error: NodeJS.ErrnoException, socket: Duplex): void => {
  // As Node's own answer: none once a response on this connection has started (it would corrupt it).
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, reason, code, message } = refusalOf(error);
  const body = JSON.stringify({ error: message, code });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
};

/**
 * The listener's 'checkExpectation': a request whose Expect is not 100-continue (RFC 9110
 * section 10.1.1) gets 417 with the REST error body, where Node would answer one without a body.
 */
export const answerUnknownExpectation = (req: IncomingMessage, res: ServerResponse): void => {
  const body = JSON.stringify({ error: 'the only expectation this server meets is Expect: 100-continue', code: 'invalid_input' });
  res
    .writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      connection: 'close',
    })
    .end(body);
  req.resume();
};
