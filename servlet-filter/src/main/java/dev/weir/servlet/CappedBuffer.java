package dev.weir.servlet;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * A byte buffer that never grows past its cap: neither its content nor its array. Not
 * thread-safe; {@link BufferedResponse} guards it.
 */
final class CappedBuffer {
  private static final int INITIAL = 512;
  private final int cap;
  private byte[] bytes = new byte[0];
  private int size;

  CappedBuffer(int cap) {
    this.cap = cap;
  }

  int cap() {
    return cap;
  }

  int size() {
    return size;
  }

  /** The array's length: what the buffer really holds in memory. */
  int capacity() {
    return bytes.length;
  }

  /** Whether {@code len} more bytes fit under the cap. */
  boolean fits(int len) {
    return len <= cap - size;
  }

  /** Appends; the caller has checked {@link #fits}. */
  void write(byte[] b, int off, int len) {
    if (size + len > bytes.length) {
      int grown = Math.max(size + len, Math.max(INITIAL, bytes.length * 2));
      bytes = Arrays.copyOf(bytes, Math.min(cap, grown));
    }
    System.arraycopy(b, off, bytes, size, len);
    size += len;
  }

  void write(int b) {
    if (size == bytes.length) {
      bytes = Arrays.copyOf(bytes, Math.min(cap, Math.max(INITIAL, bytes.length * 2)));
    }
    bytes[size++] = (byte) b;
  }

  void reset() {
    size = 0;
  }

  void writeTo(OutputStream out) throws IOException {
    out.write(bytes, 0, size);
  }
}
