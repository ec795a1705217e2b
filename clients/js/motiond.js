// motiond.js: the browser client for motiond's WebSocket endpoint. An ES module with no
// dependencies; motiond serves it at /motiond.js, and it lives in motiond's repository at
// clients/js/motiond.js. It speaks protocol v1 (docs/protocol.md), one JSON object per frame.
//
// Make a DOM element follow motiond in three lines:
//
//     import { connect } from 'http://127.0.0.1:8765/motiond.js';
//     const motiond = connect();                       // ws://<motiond's host>/ws
//     motiond.bind(document.querySelector('#card'), 'card');
//
// What it gives:
// - connect(url, {token, timeout, onStatus, onEvent, onError}): a client that reconnects by
//   itself, waiting longer after each failure (exponential back-off, capped, with jitter so a
//   restarted daemon is not met by every kiosk at once). After each reconnect it sends the
//   token again (`auth`), adds again the elements it registered and subscribes again.
//   onStatus(status, {control, retryIn, reason}) hears 'connecting', 'open', 'waiting' (to
//   reconnect) and 'closed'; onEvent(event) every event that is not a stream's (device,
//   bye); onError(error) what failed with no caller to tell (a wrong token, a subscription
//   refused after a reconnect); it defaults to console.warn.
// - request(op, args): a promise of the reply's `result`, matched by `id`. It is rejected
//   with an Error whose `code` is the protocol's error code (`forbidden`, `unknown_stream`…),
//   or `timeout` when no reply comes within `timeout` ms, or `disconnected` when the
//   connection closes first.
// - subscribe(patterns, onValue): onValue(value, stream, event) for every value (and
//   gesture `state` event) of streams matching the names or globs. Returns a function that
//   unsubscribes; its `ready` is a promise of the subscribe reply.
// - bind(element, id): applies `transform: translate(…) rotate(…) scale(…)` from the
//   element's position, rotation and scale streams (and its width and height from ID.size
//   with {size: true}), at most once per animation frame with the latest values, never once
//   per message. Where motiond predicts touches ([screen] prediction), it draws the
//   predicted values instead (ID.predicted_position…: where the element will be when the
//   frame reaches the glass), unless {predicted: false}. Returns a function that unbinds.
// - register(element, id, interactions): adds the DOM element to motiond's scene
//   (`add_element`) where it is on the page, so touches on it drive its streams; needs
//   control (a token). unregister(id) removes it.
//
// Pixels. motiond works in screen pixels: the picture the touchscreen is mapped onto
// ([screen] in motiond.toml). A page works in CSS pixels. The client maps between them with
// `viewport` (an option of connect): screen = left + css × ratio, per axis (top for y). The
// default, {left: 0, top: 0, ratio: window.devicePixelRatio}, is right for a kiosk: a page
// full-screen, its viewport's top-left at the screen's, where ratio is 1 unless the display
// is scaled (then devicePixelRatio is the scale). A page that is not full-screen passes the
// screen position of its viewport's top-left (in screen pixels) as left and top. For bind,
// an element's CSS position is relative to its containing block: place bound elements with
// `position: absolute; left: 0; top: 0` in a container at the viewport's top-left, and the
// element's centre lands where motiond says its centre is.
//
// For tests and other hosts, connect also takes WebSocket, requestAnimationFrame,
// setTimeout, clearTimeout and random; they default to the browser's.

const defaults = {
  timeout: 5000,
  firstRetry: 250,     // ms before the first reconnect attempt
  maxRetry: 10000,     // the back-off's cap: a kiosk finds a restarted daemon within 10 s
};

/// The WebSocket motiond serves beside this module: a page importing
/// http://127.0.0.1:8765/motiond.js talks to ws://127.0.0.1:8765/ws whatever its own origin.
function defaultURL() {
  const base = [import.meta.url, globalThis.location && globalThis.location.href]
    .find((href) => typeof href === 'string' && /^https?:/.test(href));
  if (!base) return 'ws://127.0.0.1:8765/ws';
  const url = new URL('/ws', base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/// A regular expression for a protocol glob: `*` any characters (dots too), `?` one.
function globExpression(pattern) {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp('^' + escaped.replace(/\*/g, '.*').replace(/\?/g, '.') + '$', 's');
}

function protocolError(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

/// Opens a client; see the top of this file.
export function connect(url = defaultURL(), options = {}) {
  return new Client(url, options);
}

export class Client {
  constructor(url, options = {}) {
    this.url = url;
    this.token = options.token;
    this.timeout = options.timeout ?? defaults.timeout;
    this.firstRetry = options.firstRetry ?? defaults.firstRetry;
    this.maxRetry = options.maxRetry ?? defaults.maxRetry;
    this.onStatus = options.onStatus ?? (() => {});
    this.onEvent = options.onEvent ?? (() => {});
    this.onError = options.onError ?? ((error) => console.warn(`motiond: ${error.message}`));
    this.host = {
      WebSocket: options.WebSocket ?? globalThis.WebSocket,
      requestAnimationFrame: options.requestAnimationFrame ?? ((f) => globalThis.requestAnimationFrame(f)),
      setTimeout: options.setTimeout ?? ((f, ms) => globalThis.setTimeout(f, ms)),
      clearTimeout: options.clearTimeout ?? ((handle) => globalThis.clearTimeout(handle)),
      random: options.random ?? Math.random,
    };
    const ratio = globalThis.devicePixelRatio || 1;
    this.viewport = { left: 0, top: 0, ratio, ...options.viewport };

    /// 'connecting', 'open' (hello received), 'waiting' (to reconnect) or 'closed' (by close()).
    this.status = 'connecting';
    /// Whether this connection may use the control operations (after auth).
    this.control = false;
    /// The hello of the current connection.
    this.hello = null;

    this.nextID = 1;
    this.pending = new Map();      // id → {resolve, reject, timer, message, sent}
    this.subscribers = new Set();  // {patterns, expressions, onValue}
    this.registered = new Map();   // element id → add_element's element
    this.failures = 0;             // consecutive attempts without a hello, for the back-off
    this.retryTimer = null;
    this.socket = null;
    this.open();
  }

  // Connection

  open() {
    this.setStatus('connecting');
    const socket = new this.host.WebSocket(this.url);
    this.socket = socket;
    socket.onmessage = (message) => { if (this.socket === socket) this.receive(message.data); };
    socket.onclose = (event) => { if (this.socket === socket) this.lost(event && event.reason); };
    socket.onerror = () => {};  // a close event follows, and carries what there is to say
  }

  /// The time before the next attempt: doubling from firstRetry up to maxRetry, then a random
  /// point in its upper half, so a crowd of clients spreads out.
  retryDelay() {
    const ceiling = Math.min(this.maxRetry, this.firstRetry * 2 ** this.failures);
    return ceiling / 2 + this.host.random() * ceiling / 2;
  }

  lost(reason) {
    this.socket = null;
    this.control = false;
    this.hello = null;
    for (const [id, request] of this.pending) {
      if (!request.sent) continue;  // not sent yet: it goes out on the next connection
      this.settle(id);
      request.reject(protocolError('disconnected', `motiond closed the connection${reason ? ': ' + reason : ''} before answering ${request.message.op}`));
    }
    if (this.status === 'closed') return;
    const delay = this.retryDelay();
    this.failures += 1;
    this.setStatus('waiting', { retryIn: delay, reason });
    this.retryTimer = this.host.setTimeout(() => { this.retryTimer = null; this.open(); }, delay);
  }

  /// Closes the connection for good: no reconnect, pending requests rejected.
  close() {
    this.setStatus('closed');
    if (this.retryTimer !== null) this.host.clearTimeout(this.retryTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket) socket.close();
    for (const [id, request] of this.pending) {
      this.settle(id);
      request.reject(protocolError('disconnected', 'the client was closed'));
    }
  }

  setStatus(status, detail = {}) {
    this.status = status;
    this.onStatus(status, { control: this.control, ...detail });
  }

  receive(text) {
    let message;
    try { message = JSON.parse(text); } catch { return; }  // never from motiond; nothing to do
    if (message.id !== undefined && message.ok !== undefined) return this.answer(message);
    if (message.event === 'hello') return this.greeted(message);
    if ((message.event === 'value' || message.event === 'state') && typeof message.stream === 'string') {
      const value = message.event === 'value' ? message.value : message.state;
      for (const subscriber of this.subscribers) {
        if (subscriber.expressions.some((expression) => expression.test(message.stream))) {
          subscriber.onValue(value, message.stream, message);
        }
      }
      return;
    }
    this.onEvent(message);
  }

  /// A new connection is ready: authenticate, put back what the page had, then send what
  /// waited. The daemon answers in order, so the element exists before it is subscribed to.
  greeted(hello) {
    this.hello = hello;
    this.control = hello.control === true;
    this.failures = 0;
    const restore = [];
    if (this.token !== undefined) {
      restore.push(this.request('auth', { token: this.token }).then(
        (result) => { this.control = result && result.control === true; }, this.onError));
    }
    for (const element of this.registered.values()) {
      restore.push(this.request('add_element', { element }).catch((error) => {
        if (error.code !== 'exists') this.onError(error);  // exists: it outlived the connection
      }));
    }
    // Subscriptions made before this connection are still queued: they go out below.
    const queued = (subscriber) => this.pending.get(subscriber.requestID)?.sent === false;
    const patterns = this.heldPatterns((subscriber) => !queued(subscriber) && !subscriber.optional);
    if (patterns.length) {
      restore.push(this.request('subscribe', { streams: patterns }).catch(this.onError));
    }
    // Optional patterns one by one: one that matches nothing must not take the rest with it.
    for (const pattern of this.heldPatterns((subscriber) => !queued(subscriber) && subscriber.optional)) {
      restore.push(this.request('subscribe', { streams: [pattern] }).catch((error) => {
        if (error.code !== 'unknown_stream') this.onError(error);
      }));
    }
    for (const [, request] of this.pending) {
      if (!request.sent) this.transmit(request);
    }
    Promise.all(restore).then(() => { if (this.hello === hello) this.setStatus('open'); });
  }

  heldPatterns(which = () => true) {
    const patterns = new Set();
    for (const subscriber of this.subscribers) {
      if (which(subscriber)) for (const pattern of subscriber.patterns) patterns.add(pattern);
    }
    return [...patterns];
  }

  // Requests

  /// Sends {id, op, ...args}; resolves with the reply's result. Sent now when connected,
  /// otherwise as soon as the next connection says hello; the timeout runs from now.
  request(op, args = {}) {
    return new Promise((resolve, reject) => {
      const id = this.nextID++;
      const message = { ...args, id, op };
      const timer = this.host.setTimeout(() => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        reject(protocolError('timeout', `motiond did not answer ${op} within ${this.timeout} ms`));
      }, this.timeout);
      const request = { resolve, reject, timer, message, sent: false };
      this.pending.set(id, request);
      if (this.hello) this.transmit(request);
    });
  }

  transmit(request) {
    request.sent = true;
    this.socket.send(JSON.stringify(request.message));
  }

  settle(id) {
    const request = this.pending.get(id);
    this.pending.delete(id);
    this.host.clearTimeout(request.timer);
    return request;
  }

  answer(reply) {
    if (!this.pending.has(reply.id)) return;  // timed out already
    const request = this.settle(reply.id);
    if (reply.ok) return request.resolve(reply.result);
    const error = reply.error || {};
    request.reject(protocolError(error.code || 'error', error.message || 'motiond refused the request'));
  }

  // Streams

  /// Calls onValue(value, stream, event) for each value of the streams matching `patterns`
  /// (a name or glob, or an array of them). Returns the function that stops it. With
  /// {optional: true}, patterns that match no stream (now, or after a reconnect) are not an
  /// error: whatever matches later is still not subscribed until the next connection.
  subscribe(patterns, onValue, { optional = false } = {}) {
    const list = Array.isArray(patterns) ? [...patterns] : [patterns];
    const subscriber = { patterns: list, expressions: list.map(globExpression), onValue, optional };
    this.subscribers.add(subscriber);
    const ready = this.request('subscribe', { streams: list }).catch((error) => {
      if (optional && error.code === 'unknown_stream') return { streams: [] };
      throw error;
    });
    subscriber.requestID = this.nextID - 1;
    const unsubscribe = () => {
      if (!this.subscribers.delete(subscriber)) return;
      const stillHeld = new Set(this.heldPatterns());
      const released = list.filter((pattern) => !stillHeld.has(pattern));
      if (released.length && this.hello) this.request('unsubscribe', { streams: released }).catch(() => {});
    };
    unsubscribe.ready = ready;
    ready.catch(this.onError);  // a caller that never looks at `ready` still hears of it
    return unsubscribe;
  }

  /// Makes `element` follow motiond's element `id`: its transform (and its size, with
  /// {size: true}) is written once per animation frame while values come in.
  bind(element, id, { size = false, predicted = true } = {}) {
    const latest = { position: null, rotation: 0, scale: 1, size: null };
    let scheduled = false;
    let bound = true;
    const draw = () => {
      scheduled = false;
      if (!bound || !latest.position) return;
      const { left, top, ratio } = this.viewport;
      // The predicted values while they come (motiond publishes them equal to the plain
      // ones when nothing is predicted); the plain ones otherwise.
      const position = latest.predicted_position ?? latest.position;
      const rotation = latest.predicted_rotation ?? latest.rotation;
      const scale = latest.predicted_scale ?? latest.scale;
      const x = (position.x - left) / ratio;
      const y = (position.y - top) / ratio;
      if (size && latest.size) {
        element.style.width = `${latest.size.width / ratio}px`;
        element.style.height = `${latest.size.height / ratio}px`;
      }
      element.style.transform =
        `translate(${x}px, ${y}px) translate(-50%, -50%) rotate(${rotation}rad) scale(${scale})`;
    };
    const onValue = (value, stream) => {
      latest[stream.slice(id.length + 1)] = value;
      if (!scheduled) {
        scheduled = true;
        this.host.requestAnimationFrame(draw);
      }
    };
    const names = ['position', 'rotation', 'scale'].concat(size ? ['size'] : []);
    const unsubscribe = this.subscribe(names.map((name) => `${id}.${name}`), onValue);
    // The predicted streams exist only where motiond predicts: asked for apart, and their
    // absence is no error.
    const unsubscribePredicted = predicted ? this.subscribe(`${id}.predicted_*`, onValue, { optional: true }) : () => {};
    const unbind = () => { bound = false; unsubscribe(); unsubscribePredicted(); };
    unbind.ready = unsubscribe.ready;
    return unbind;
  }

  /// Adds `element` to motiond's scene as `id`, where it is on the page now (its bounding
  /// rectangle, mapped to screen pixels by `viewport`), with `interactions` as in
  /// motiond.toml (for example {tossable: {destination: [x, y]}}). Needs control. Resolves
  /// with the element as motiond added it; added again after a reconnect.
  register(element, id, interactions = {}, extra = {}) {
    const rect = element.getBoundingClientRect();
    const { left, top, ratio } = this.viewport;
    const description = {
      id,
      center: [left + (rect.left + rect.width / 2) * ratio, top + (rect.top + rect.height / 2) * ratio],
      size: [rect.width * ratio, rect.height * ratio],
      interactions,
      ...extra,
    };
    return this.request('add_element', { element: description }).then((result) => {
      this.registered.set(id, description);
      return result;
    });
  }

  /// Removes the element `id` that register added.
  unregister(id) {
    this.registered.delete(id);
    return this.request('remove_element', { element: id });
  }
}
