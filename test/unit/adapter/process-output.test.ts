/** Captured output: bytes kept up to the cap with the total counted, and text that says when decoding lost bytes. */
import { Capture, decodeUtf8, streamOutput } from '../../../src/adapter/runtime/process.js';

test("non-UTF-8 bytes ('ok\\377') are kept as bytes and the text is flagged lossy", () => {
  const c = new Capture(100);
  c.add(Buffer.from([0x6f, 0x6b, 0xff]));
  expect(streamOutput(c.stream())).toEqual({
    base64: 'b2v/',
    bytes: 3,
    totalBytes: 3,
    truncated: false,
    text: 'ok\uFFFD',
    encoding: 'utf-8',
    lossy: true,
  });
});

test('output past the cap: truncated, with the total byte count', () => {
  const c = new Capture(4);
  c.add(Buffer.from('abc'));
  c.add(Buffer.from('defg'));
  c.add(Buffer.from('hij'));
  expect(streamOutput(c.stream())).toMatchObject({
    bytes: 4,
    totalBytes: 10,
    truncated: true,
    text: 'abcd',
    lossy: false,
  });
});

test('a character cut by truncation is not counted as lossy; a bad byte before the cut is', () => {
  const e = Buffer.from('é'); // c3 a9
  expect(decodeUtf8(Buffer.concat([Buffer.from('a'), e.subarray(0, 1)]), true).lossy).toBe(false);
  expect(decodeUtf8(Buffer.concat([Buffer.from('a'), e.subarray(0, 1)]), false).lossy).toBe(true);
  expect(decodeUtf8(Buffer.from([0xff, 0x61, 0xc3]), true).lossy).toBe(true);
  expect(decodeUtf8(Buffer.from([0x61, 0xff]), true).lossy).toBe(true);
});
