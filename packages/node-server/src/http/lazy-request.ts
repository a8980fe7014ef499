import type { IncomingMessage } from 'node:http';
import {
  bodyStream,
  clientLeftBeforeRead,
  mayCarryBody,
  requestUrl,
  toHeaders,
} from './incoming-message-to-request.js';

/** A `Request` made by `lazyRequest`, and how the adapter aborts its signal. */
export interface LazyRequest {
  request: Request;
  /** Aborts `request.signal` (now, or as soon as something first reads it) with `reason`. */
  abort(reason: unknown): void;
}

interface LazyState {
  readonly req: IncomingMessage;
  url: string | undefined;
  headers: Headers | undefined;
  controller: AbortController | undefined;
  /** Set once the adapter aborted: the reason a signal made later starts aborted with. */
  abortedWith: { reason: unknown } | undefined;
  /** The body was read by `arrayBuffer`/`text`/`json` straight from the node stream. */
  bodyRead: boolean;
  /** undici's own `Request`, once something needed more than this object does itself. */
  real: Request | undefined;
}

const STATE = Symbol('tollgate.lazyRequest');
type Lazy = Request & { [STATE]: LazyState };

/**
 * A Web `Request` for a node:http request that is cheap to make: on Node 20 undici's `Request` with
 * a streamed body and a signal costs ~60 µs and several objects V8 must later collect (its body's
 * `ReadableStream` alone is made transferable, the signal is linked through a `WeakRef`), a tenth
 * of a metered request's main thread. This object answers `method`, `url`, `headers`, `signal`,
 * `bodyUsed` and reading the whole body (`arrayBuffer`, `bytes`, `text`, `json`, straight from the
 * node stream) itself, and builds undici's `Request` the first time anything else is used (`body`,
 * `clone()`, `formData()`, …), delegating to it from then on. It is an `instanceof Request`.
 *
 * What it cannot be is an argument to undici itself: `new Request(request)` and `fetch(request)`
 * look for undici's private state and throw. Tollgate's core never does either; a handler that
 * does should get real requests (`toNodeHandler`'s default). Used only for a request whose body
 * nothing has read yet (see `incomingMessageToRequest` for the others).
 */
export function lazyRequest(req: IncomingMessage): LazyRequest {
  const state: LazyState = {
    req,
    url: undefined,
    headers: undefined,
    controller: undefined,
    abortedWith: undefined,
    bodyRead: false,
    real: undefined,
  };
  const request = Object.create(lazyRequestPrototype) as Lazy;
  request[STATE] = state;
  return {
    request,
    abort(reason) {
      if (state.abortedWith) return;
      state.abortedWith = { reason };
      state.controller?.abort(reason);
    },
  };
}

function stateOf(request: Request): LazyState {
  const state = (request as Lazy)[STATE];
  if (!state) throw new TypeError('Illegal invocation');
  return state;
}

function signalOf(state: LazyState): AbortSignal {
  if (!state.controller) {
    state.controller = new AbortController();
    if (state.abortedWith) state.controller.abort(state.abortedWith.reason);
  }
  return state.controller.signal;
}

/** undici's `Request` for this one, made once: with the node body stream, or a used body when read. */
function realRequest(state: LazyState): Request {
  if (state.real) return state.real;
  const init: RequestInit & { duplex?: 'half' } = {
    method: state.req.method ?? 'GET',
    headers: headersOf(state),
    signal: signalOf(state),
  };
  if (mayCarryBody(state.req)) {
    init.body = state.bodyRead ? new ReadableStream() : bodyStream(state.req);
    init.duplex = 'half';
  }
  state.real = new Request(urlOf(state), init);
  // A body read here is used there too (a read disturbs the stream; undici refuses one given so).
  if (state.bodyRead) void state.real.body?.getReader().read();
  return state.real;
}

function headersOf(state: LazyState): Headers {
  state.headers ??= toHeaders(state.req);
  return state.headers;
}

function urlOf(state: LazyState): string {
  state.url ??= requestUrl(state.req).href;
  return state.url;
}

/** The whole body, read from the node stream as it arrives; rejects when the client leaves first. */
async function readBody(state: LazyState): Promise<Uint8Array<ArrayBuffer>> {
  if (state.real) return new Uint8Array(await state.real.arrayBuffer());
  // As undici's: a request without a body reads as empty, as often as asked.
  if (!mayCarryBody(state.req)) return new Uint8Array(0);
  if (state.bodyRead) throw new TypeError('Body is unusable: Body has already been read');
  state.bodyRead = true;
  const { req } = state;
  // Destroyed before anything read it (the client left): its 'close' has been and gone.
  if (req.destroyed) throw clientLeftBeforeRead();
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const received: Buffer[] = [];
    const onData = (chunk: Buffer) => received.push(chunk);
    const onEnd = () => settle(() => resolve(received));
    const onError = (error: Error) => settle(() => reject(error));
    const onClose = () => settle(() => reject(new Error('The client closed the connection mid-body.')));
    const settle = (finish: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      finish();
    };
    req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
  // A copy of its own: a small Buffer is a view into a larger, shared pool.
  return new Uint8Array(Buffer.concat(chunks));
}

/** The whole body as UTF-8 text (a byte-order mark dropped, as undici's `text()` does). */
function readText(state: LazyState): Promise<string> {
  return readBody(state).then((bytes) => new TextDecoder().decode(bytes));
}

const ownMembers: PropertyDescriptorMap = {
  method: {
    get(this: Request) {
      return stateOf(this).req.method ?? 'GET';
    },
  },
  url: {
    get(this: Request) {
      return urlOf(stateOf(this));
    },
  },
  headers: {
    get(this: Request) {
      const state = stateOf(this);
      return state.real ? state.real.headers : headersOf(state);
    },
  },
  signal: {
    get(this: Request) {
      return signalOf(stateOf(this));
    },
  },
  bodyUsed: {
    get(this: Request) {
      const state = stateOf(this);
      return state.real ? state.real.bodyUsed : state.bodyRead;
    },
  },
  arrayBuffer: {
    value(this: Request) {
      return readBody(stateOf(this)).then((bytes) => bytes.buffer);
    },
  },
  bytes: {
    value(this: Request) {
      return readBody(stateOf(this));
    },
  },
  text: {
    value(this: Request) {
      return readText(stateOf(this));
    },
  },
  json: {
    value(this: Request) {
      return readText(stateOf(this)).then((text) => JSON.parse(text) as unknown);
    },
  },
};

/** Every other member of `Request.prototype`, answered by undici's own `Request` for this one. */
function delegatedMembers(): PropertyDescriptorMap {
  const members: PropertyDescriptorMap = {};
  for (const key of Reflect.ownKeys(Request.prototype)) {
    if (key === 'constructor' || key === Symbol.toStringTag || (typeof key === 'string' && key in ownMembers))
      continue;
    const member = Object.getOwnPropertyDescriptor(Request.prototype, key);
    if (typeof member?.value === 'function') {
      const method = member.value as (...args: unknown[]) => unknown;
      members[key] = {
        value(this: Request, ...args: unknown[]) {
          return Reflect.apply(method, realRequest(stateOf(this)), args);
        },
      };
    } else if (member?.get) {
      const get = member.get;
      members[key] = {
        get(this: Request) {
          return Reflect.apply(get, realRequest(stateOf(this)), []);
        },
      };
    }
  }
  return members;
}

const lazyRequestPrototype: Request = Object.create(Request.prototype, {
  ...delegatedMembers(),
  ...ownMembers,
});
