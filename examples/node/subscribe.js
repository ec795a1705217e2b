#!/usr/bin/env node
// Follow an element's position from motiond: Node.js, no packages.
//
//     node subscribe.js [ELEMENT] [--socket PATH] [--count N]
//
// Connects to motiond's socket, subscribes to ELEMENT.position (default: surface, the
// element of motiond's built-in scene) and prints each position as it changes. When motiond
// restarts, it connects again (waiting longer after each failed try, up to 10 s) and
// subscribes again: a new motiond sends a new hello, and the position it keeps across the
// restart comes first. See docs/protocol.md for everything else a client can ask.
'use strict';
const net = require('net');
const readline = require('readline');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index >= 0 ? args.splice(index, 2)[1] : fallback;
};
const socketPath = option('--socket', process.env.MOTIOND_SOCKET || '/run/motiond/motiond.sock');
const count = Number(option('--count', '0'));
const element = args[0] || 'surface';
const stream = `${element}.position`;
let seen = 0;
let delay = 250;

function connect() {
  const connection = net.createConnection(socketPath);
  const lines = readline.createInterface({ input: connection });
  lines.on('line', (line) => {
    const message = JSON.parse(line);
    if (message.event === 'hello') {
      delay = 250; // it was there: the next try comes soon
      console.log(`connected to motiond ${message.version}`);
      connection.write(JSON.stringify({ id: 1, op: 'subscribe', streams: [stream] }) + '\n');
    } else if (message.id === 1 && !message.ok) {
      console.error(`motiond refused: ${message.error.message}`);
      process.exit(1);
    } else if (message.event === 'value' && message.stream === stream) {
      const { x, y } = message.value;
      console.log(`${message.t.toFixed(3)} ${stream} x=${x.toFixed(1)} y=${y.toFixed(1)}`);
      seen += 1;
      if (count && seen >= count) process.exit(0);
    }
  });
  connection.on('error', (error) => console.log(`cannot talk to motiond at ${socketPath}: ${error.message}; trying again`));
  // readline passes the socket's error on to its interface too, where nobody listening would
  // end the process: the socket's listener above has said it, and 'close' tries again.
  lines.on('error', () => {});
  connection.on('close', () => {
    // Jittered, so that a restarted motiond is not met by every kiosk at once.
    setTimeout(connect, delay / 2 + Math.random() * delay / 2);
    delay = Math.min(delay * 2, 10000);
  });
}

connect();
