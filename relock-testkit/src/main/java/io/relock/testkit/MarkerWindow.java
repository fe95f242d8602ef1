package io.relock.testkit;

/**
 * What a {@link FaultProxy} connection's client has sent, as far as the marker search needs it:
 * the chunk just read, preceded by the last bytes of the chunks before it, so that a marker
 * split across two reads is still found — and found once only, in the chunk that completes it.
 *
 * <p>Not thread-safe: each connection has one, used only by its client-to-server thread.
 */
final class MarkerWindow {

    private byte[] window = new byte[0];
    private int length; // valid bytes in window
    private int fresh; // index in window where the current chunk starts

    /**
     * Makes {@code chunk[0, chunkLength)} the current chunk, keeping up to {@code keep} bytes of
     * what came before it.
     *
     * @param keep how many earlier bytes a marker may start in: the longest marker's length minus one
     */
    void advance(byte[] chunk, int chunkLength, int keep) {
        int kept = Math.max(0, Math.min(keep, length));
        int needed = kept + chunkLength;
        if (window.length < needed) {
            byte[] larger = new byte[needed];
            System.arraycopy(window, length - kept, larger, 0, kept);
            window = larger;
        } else {
            System.arraycopy(window, length - kept, window, 0, kept);
        }
        System.arraycopy(chunk, 0, window, kept, chunkLength);
        length = needed;
        fresh = kept;
    }

    /** Forgets everything: the next chunk is searched on its own (after bytes that were not forwarded). */
    void reset() {
        length = 0;
        fresh = 0;
    }

    /**
     * Returns whether {@code marker} occurs in the window and ends inside the current chunk, so
     * that an occurrence already seen in an earlier chunk does not count again.
     */
    boolean containsNew(byte[] marker) {
        int markerLength = marker.length;
        for (int start = Math.max(0, fresh - markerLength + 1); start + markerLength <= length; start++) {
            int matched = 0;
            while (matched < markerLength && window[start + matched] == marker[matched]) {
                matched++;
            }
            if (matched == markerLength) {
                return true;
            }
        }
        return false;
    }
}
