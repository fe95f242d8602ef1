package io.relock.internal.backend;

/** What hears the pub/sub connection ({@link PubSubChannels#listen}). */
public interface ChannelListener {

    /** A message on a subscribed channel (or sharded channel). */
    void onMessage(String channel, String message);

    /** The connection is up: at first, and after each reconnect, when messages may have been missed. */
    void onConnected();
}
