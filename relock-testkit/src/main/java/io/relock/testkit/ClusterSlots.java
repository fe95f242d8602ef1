package io.relock.testkit;

import java.nio.charset.StandardCharsets;

/** Redis Cluster's key-to-slot hashing, for {@link ClusterTopology#slot(String)}. */
final class ClusterSlots {

    private ClusterSlots() {
    }

    /** The slot of {@code key}, hash tag honoured; see {@link ClusterTopology#slot(String)}. */
    static int of(String key) {
        // Searching bytes is safe: in UTF-8, no byte of a multi-byte character is below 0x80.
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        int start = 0;
        int end = bytes.length;
        int open = indexOf(bytes, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(bytes, (byte) '}', open + 1);
            if (close > open + 1) {
                start = open + 1;
                end = close;
            }
        }
        return crc16(bytes, start, end) % ClusterTopology.SLOTS;
    }

    private static int indexOf(byte[] bytes, byte value, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == value) {
                return i;
            }
        }
        return -1;
    }

    /** CRC16-CCITT (XModem): polynomial 0x1021, initial value 0, as in the Redis Cluster specification. */
    private static int crc16(byte[] bytes, int start, int end) {
        int crc = 0;
        for (int i = start; i < end; i++) {
            crc ^= (bytes[i] & 0xFF) << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
            crc &= 0xFFFF;
        }
        return crc;
    }
}
