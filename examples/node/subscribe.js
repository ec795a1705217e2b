#!/usr/bin/env node
// Follow an element's position from motiond: Node.js, no packages.
//
//     node subscribe.js [ELEMENT] [--socket PATH] [--count N]
//
// Connects to motiond's socket, subscribes to ELEMENT.position (default: surface, the
// element of motiond's built-in scene) and prints each position as it changes. See
// docs/protocol.md for everything else a client can ask.
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

const connection = net.createConnection(socketPath);
const lines = readline.createInterface({ input: connection });
let seen = 0;

lines.on('line', (line) => {
  const message = JSON.parse(line);
  if (message.event === 'hello') {
    console.log(`connected to motiond ${message.version}`);
    connection.write(JSON.stringify({ id: 1, op: 'subscribe', streams: [stream] }) + '\n');
  } else if (message.id === 1 && !message.ok) {
    console.error(`motiond refused: ${message.error.message}`);
    process.exit(1);
  } else if (message.event === 'value' && message.stream === stream) {
    const { x, y } = message.value;
    console.log(`${message.t.toFixed(3)} ${stream} x=${x.toFixed(1)} y=${y.toFixed(1)}`);
    seen += 1;
    if (count && seen >= count) connection.end();
  }
});
connection.on('error', (error) => {
  console.error(`cannot talk to motiond at ${socketPath}: ${error.message}`);
  process.exit(1);
});
connection.on('close', () => process.exit(0));
