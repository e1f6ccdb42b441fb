'use strict';
// tools/make-vsix.js packages the extension without npm: read the archive back and check it.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { makeVsix, crc32 } = require('../tools/make-vsix');

function readZip(buf) {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(eocd >= 0, 'end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const files = new Map();
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, 'central directory entry');
    const crc = buf.readUInt32LE(p + 16);
    const size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    assert.equal(buf.readUInt32LE(local), 0x04034b50, 'local header');
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = zlib.inflateRawSync(buf.subarray(start, start + size));
    assert.equal(crc32(data), crc, `crc of ${name}`);
    files.set(name, data);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return files;
}

test('make-vsix packages the extension as a VSIX that installs with code --install-extension', () => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'parlance-vsix-')), 'parlance.vsix');
  makeVsix(out);
  const files = readZip(fs.readFileSync(out));
  const root = path.resolve(__dirname, '..');
  for (const f of ['package.json', 'extension.js', 'lib/jsonrpc.js', 'lib/client.js', 'README.md']) {
    assert.deepEqual(files.get(`extension/${f}`), fs.readFileSync(path.join(root, f)), f);
  }
  const pkg = JSON.parse(files.get('extension/package.json'));
  const manifest = files.get('extension.vsixmanifest').toString();
  assert.match(manifest, new RegExp(`Id="${pkg.name}" Version="${pkg.version}" Publisher="${pkg.publisher}"`));
  assert.match(manifest, /Path="extension\/package.json"/);
  assert.ok(files.has('[Content_Types].xml'));
  // everything package.json's "main" loads is inside
  const main = files.get('extension/extension.js').toString();
  for (const [, rel] of main.matchAll(/require\('\.\/(lib\/[a-z]+)'\)/g)) assert.ok(files.has(`extension/${rel}.js`), rel);
  fs.rmSync(path.dirname(out), { recursive: true });
});
