// Unit tests of clients/js/motiond.js, the browser client, in Node 20 without packages:
//     node --test Tests/EndToEnd/motiond_js.test.mjs
// A fake WebSocket plays motiond, a fake clock stands for setTimeout, and a fake
// requestAnimationFrame runs frames when the test says. Started by JavaScriptClientTests.swift.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '../../clients/js/motiond.js';

/// A fake host: sockets the test answers for motiond, timers it advances, frames it runs.
function fakeHost({ random = () => 0.5 } = {}) {
  const host = { sockets: [], timers: [], now: 0, frames: [], random };
  host.WebSocket = class {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.closed = false;
      host.sockets.push(this);
    }
    send(text) {
      assert.equal(typeof text, 'string');
      assert.ok(!text.includes('\n'), 'one JSON object per frame, no newline');
      this.sent.push(JSON.parse(text));
    }
    close() { this.closed = true; }
    // What the fake motiond does:
    deliver(message) { this.onmessage({ data: JSON.stringify(message) }); }
    hello(control = false) { this.deliver({ event: 'hello', protocol: 1, version: '0.1.0', streams: [], control }); }
    reply(request, result = {}) { this.deliver({ id: request.id, ok: true, result }); }
    drop(reason = '') { this.closed = true; this.onclose({ code: 1006, reason }); }
    requests(op) { return this.sent.filter((message) => message.op === op); }
  };
  host.setTimeout = (callback, ms) => {
    const timer = { at: host.now + ms, callback, ms };
    host.timers.push(timer);
    return timer;
  };
  host.clearTimeout = (timer) => { host.timers = host.timers.filter((t) => t !== timer); };
  host.advance = (ms) => {
    const until = host.now + ms;
    for (;;) {
      const due = host.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      host.timers = host.timers.filter((t) => t !== due);
      host.now = due.at;
      due.callback();
    }
    host.now = until;
  };
  host.requestAnimationFrame = (callback) => { host.frames.push(callback); };
  host.runFrame = () => {
    const frames = host.frames;
    host.frames = [];
    for (const frame of frames) frame(host.now);
  };
  host.options = (extra = {}) => ({
    WebSocket: host.WebSocket, setTimeout: host.setTimeout, clearTimeout: host.clearTimeout,
    requestAnimationFrame: host.requestAnimationFrame, random: host.random, ...extra,
  });
  host.latest = () => host.sockets[host.sockets.length - 1];
  return host;
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

test('replies are matched to their requests by id, whatever their order', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options());
  const socket = host.latest();
  socket.hello();
  const devices = client.request('devices');
  const get = client.request('get', { stream: 'card.position' });
  const [devicesRequest, getRequest] = socket.sent;
  assert.deepEqual(getRequest, { id: getRequest.id, op: 'get', stream: 'card.position' });
  assert.notEqual(devicesRequest.id, getRequest.id);
  socket.reply(getRequest, { stream: 'card.position', value: { x: 1, y: 2 } });
  socket.reply(devicesRequest, { devices: ['a'] });
  assert.deepEqual(await get, { stream: 'card.position', value: { x: 1, y: 2 } });
  assert.deepEqual(await devices, { devices: ['a'] });
});

test('an error reply rejects with its code; a missing reply times out', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options({ timeout: 1000 }));
  const socket = host.latest();
  socket.hello();
  const set = client.request('set', { stream: 'card.position', value: { x: 0, y: 0 } });
  socket.deliver({ id: socket.sent[0].id, ok: false, error: { code: 'forbidden', message: 'not allowed' } });
  await assert.rejects(set, (error) => error.code === 'forbidden' && error.message === 'not allowed');

  const stats = client.request('stats');
  host.advance(999);
  let outcome = 'pending';
  stats.then(() => { outcome = 'resolved'; }, (error) => { outcome = error.code; });
  await settled();
  assert.equal(outcome, 'pending');
  host.advance(1);
  await settled();
  assert.equal(outcome, 'timeout');
  socket.reply(socket.requests('stats')[0]);  // a late reply is ignored, not misrouted
});

test('requests in flight are rejected when the connection drops', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options());
  host.latest().hello();
  const list = client.request('list');
  host.latest().drop('the daemon is stopping');
  await assert.rejects(list, (error) => error.code === 'disconnected');
});

test('reconnects with exponential back-off, capped, with jitter, and resets after a hello', () => {
  const randoms = [0, 1, 0.5, 0, 0, 0, 0, 0, 0];
  const host = fakeHost({ random: () => randoms.shift() });
  const statuses = [];
  connect('ws://motiond.test/ws', host.options({
    firstRetry: 100, maxRetry: 1000, onStatus: (status, detail) => statuses.push([status, detail.retryIn]),
  }));
  const delays = [];
  for (let attempt = 0; attempt < 7; attempt++) {
    host.latest().drop();
    const timer = host.timers.at(-1);
    delays.push(timer.ms);
    host.advance(timer.ms);
  }
  // Ceilings 100, 200, 400, 800, 1000, 1000, 1000; each delay in the ceiling's upper half.
  assert.deepEqual(delays, [50, 200, 300, 400, 500, 500, 500]);
  assert.equal(host.sockets.length, 8);
  assert.deepEqual(statuses[1], ['waiting', 50]);

  host.latest().hello();
  host.latest().drop();
  assert.equal(host.timers.at(-1).ms, 50, 'a connection that said hello starts the back-off again');
});

test('after a reconnect: auth again, the registered elements again, every subscription again', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options({ token: 's3cret' }));
  let socket = host.latest();
  socket.hello();
  socket.reply(socket.requests('auth')[0], { control: true });
  await settled();
  assert.equal(client.control, true);

  const element = { getBoundingClientRect: () => ({ left: 10, top: 20, width: 100, height: 50 }) };
  const added = client.register(element, 'note', { tossable: {} });
  socket.reply(socket.requests('add_element')[0], { id: 'note' });
  await added;
  const values = [];
  client.subscribe(['card.*'], (value, stream) => values.push([stream, value]));
  client.subscribe('note.position', () => {});
  socket.reply(socket.requests('subscribe')[0]);

  socket.drop();
  assert.equal(client.control, false);
  host.advance(host.timers.at(-1).ms);
  socket = host.latest();
  assert.equal(host.sockets.length, 2);
  assert.deepEqual(socket.sent, [], 'nothing is sent before the hello');
  socket.hello();
  assert.deepEqual(socket.sent.map((message) => message.op), ['auth', 'add_element', 'subscribe']);
  assert.equal(socket.sent[0].token, 's3cret');
  assert.deepEqual(socket.sent[1].element,
    { id: 'note', center: [60, 45], size: [100, 50], interactions: { tossable: {} } });
  assert.deepEqual(socket.sent[2].streams.sort(), ['card.*', 'note.position']);
  socket.reply(socket.sent[0], { control: true });
  await settled();
  assert.equal(client.control, true);

  socket.deliver({ event: 'value', stream: 'card.position', value: { x: 5, y: 6 }, t: 1, seq: 9 });
  socket.deliver({ event: 'value', stream: 'photo.position', value: { x: 0, y: 0 }, t: 1, seq: 1 });
  assert.deepEqual(values, [['card.position', { x: 5, y: 6 }]]);
});

test('requests made before the first hello are sent once, after it', () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options());
  client.subscribe('card.position', () => {});
  client.request('devices');
  const socket = host.latest();
  assert.deepEqual(socket.sent, []);
  socket.hello();
  assert.deepEqual(socket.sent.map((message) => message.op), ['subscribe', 'devices']);
});

test('unsubscribing sends unsubscribe only for patterns no one else holds', () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options());
  const socket = host.latest();
  socket.hello();
  const first = client.subscribe(['card.position', 'card.scale'], () => {});
  client.subscribe('card.position', () => {});
  first();
  assert.deepEqual(socket.requests('unsubscribe').map((message) => message.streams), [['card.scale']]);
});

test('bind writes the transform once per animation frame, with the latest values', () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options({ viewport: { ratio: 1 } }));
  const socket = host.latest();
  socket.hello();
  const writes = [];
  const style = {};
  Object.defineProperty(style, 'transform', { set: (value) => writes.push(value), get: () => writes.at(-1) });
  client.bind({ style }, 'card');
  assert.deepEqual(socket.requests('subscribe')[0].streams, ['card.position', 'card.rotation', 'card.scale']);

  for (let x = 100; x <= 110; x++) {
    socket.deliver({ event: 'value', stream: 'card.position', value: { x, y: 50 }, t: x, seq: x });
  }
  socket.deliver({ event: 'value', stream: 'card.rotation', value: 0.5, t: 1, seq: 1 });
  socket.deliver({ event: 'value', stream: 'card.scale', value: 2, t: 1, seq: 1 });
  assert.equal(host.frames.length, 1, 'one animation frame requested for thirteen values');
  assert.deepEqual(writes, [], 'nothing written before the frame');
  host.runFrame();
  assert.deepEqual(writes, ['translate(110px, 50px) translate(-50%, -50%) rotate(0.5rad) scale(2)']);

  host.runFrame();
  assert.equal(writes.length, 1, 'no values, no write');
  socket.deliver({ event: 'value', stream: 'card.position', value: { x: 7, y: 8 }, t: 2, seq: 12 });
  host.runFrame();
  assert.deepEqual(writes.at(-1), 'translate(7px, 8px) translate(-50%, -50%) rotate(0.5rad) scale(2)');
});

test('screen pixels map to CSS pixels through the viewport', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options({ viewport: { left: 100, top: 40, ratio: 2 } }));
  const socket = host.latest();
  socket.hello();
  const style = {};
  client.bind({ style }, 'card', { size: true });
  socket.deliver({ event: 'value', stream: 'card.position', value: { x: 500, y: 240 }, t: 1, seq: 1 });
  socket.deliver({ event: 'value', stream: 'card.size', value: { width: 300, height: 100 }, t: 1, seq: 1 });
  host.runFrame();
  assert.equal(style.transform, 'translate(200px, 100px) translate(-50%, -50%) rotate(0rad) scale(1)');
  assert.deepEqual([style.width, style.height], ['150px', '50px']);

  const element = { getBoundingClientRect: () => ({ left: 150, top: 50, width: 300, height: 100 }) };
  client.register(element, 'note');
  assert.deepEqual(socket.requests('add_element')[0].element,
    { id: 'note', center: [700, 240], size: [600, 200], interactions: {} });
});

test('a request made while reconnecting waits for the next connection instead of failing', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options());
  host.latest().hello();
  host.latest().drop();
  const devices = client.request('devices');
  const retry = () => host.advance(host.timers.find((timer) => timer.ms < client.timeout).ms);
  retry();
  host.latest().drop();  // the next attempt fails too, before any hello
  retry();
  const socket = host.latest();
  assert.equal(host.sockets.length, 3);
  socket.hello();
  socket.reply(socket.requests('devices')[0], { devices: [] });
  assert.deepEqual(await devices, { devices: [] });
});

test('a wrong token is reported to onError, and the client stays read-only and connected', async () => {
  const host = fakeHost();
  const errors = [];
  const statuses = [];
  const client = connect('ws://motiond.test/ws', host.options({
    token: 'wrong', onError: (error) => errors.push(error.code), onStatus: (status) => statuses.push(status),
  }));
  const socket = host.latest();
  socket.hello(false);
  const auth = socket.requests('auth')[0];
  socket.deliver({ id: auth.id, ok: false, error: { code: 'forbidden', message: 'the token is wrong' } });
  await settled();
  assert.deepEqual(errors, ['forbidden']);
  assert.equal(client.control, false);
  assert.deepEqual(statuses, ['connecting', 'open']);
  assert.equal(socket.closed, false);
});

test('bind draws the predicted values where motiond predicts, and the plain ones with {predicted: false}', async () => {
  const host = fakeHost();
  const client = connect('ws://motiond.test/ws', host.options({ viewport: { ratio: 1 } }));
  const socket = host.latest();
  socket.hello();
  const style = {}, plainStyle = {};
  client.bind({ style }, 'card');
  client.bind({ style: plainStyle }, 'card', { predicted: false });
  const subscriptions = socket.requests('subscribe').map((message) => message.streams);
  assert.deepEqual(subscriptions, [['card.position', 'card.rotation', 'card.scale'], ['card.predicted_*'],
    ['card.position', 'card.rotation', 'card.scale']]);
  socket.deliver({ event: 'value', stream: 'card.position', value: { x: 100, y: 50 }, t: 1, seq: 1 });
  socket.deliver({ event: 'value', stream: 'card.predicted_position', value: { x: 112, y: 50 }, t: 1, seq: 1 });
  socket.deliver({ event: 'value', stream: 'card.predicted_rotation', value: 0.25, t: 1, seq: 1 });
  host.runFrame();
  assert.equal(style.transform, 'translate(112px, 50px) translate(-50%, -50%) rotate(0.25rad) scale(1)');
  assert.equal(plainStyle.transform, 'translate(100px, 50px) translate(-50%, -50%) rotate(0rad) scale(1)');
});

test('where motiond does not predict, the predicted subscription fails quietly and bind draws the plain values', async () => {
  const host = fakeHost();
  const errors = [];
  const client = connect('ws://motiond.test/ws', host.options({ viewport: { ratio: 1 }, onError: (error) => errors.push(error) }));
  let socket = host.latest();
  socket.hello();
  const style = {};
  client.bind({ style }, 'card');
  const [plain, predicted] = socket.requests('subscribe');
  socket.reply(plain, { streams: plain.streams });
  socket.deliver({ id: predicted.id, ok: false, error: { code: 'unknown_stream', message: "no stream is called or matches 'card.predicted_*'" } });
  await settled();
  socket.deliver({ event: 'value', stream: 'card.position', value: { x: 30, y: 40 }, t: 1, seq: 1 });
  host.runFrame();
  assert.equal(style.transform, 'translate(30px, 40px) translate(-50%, -50%) rotate(0rad) scale(1)');
  assert.deepEqual(errors, []);

  // After a reconnect the optional pattern goes alone, so its absence cannot refuse the rest.
  socket.drop();
  host.advance(host.timers.at(-1).ms);
  socket = host.latest();
  socket.hello();
  assert.deepEqual(socket.requests('subscribe').map((message) => message.streams),
    [['card.position', 'card.rotation', 'card.scale'], ['card.predicted_*']]);
  const [, again] = socket.requests('subscribe');
  socket.deliver({ id: again.id, ok: false, error: { code: 'unknown_stream', message: 'none' } });
  await settled();
  assert.deepEqual(errors, []);
});
