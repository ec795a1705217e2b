// motiond.js: the browser client for motiond's WebSocket endpoint (a placeholder; the
// module is being written).
export {};
