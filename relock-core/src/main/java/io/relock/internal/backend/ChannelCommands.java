package io.relock.internal.backend;

import java.util.concurrent.CompletableFuture;

/**
 * The two commands the unlock channels send: on the pub/sub connection ({@link PubSubChannels}),
 * or on a stand-in in unit tests.
 */
public interface ChannelCommands {

    /** Subscribes; completes when the server confirmed it. */
    CompletableFuture<Void> subscribe(String channel);

    /** Unsubscribes; completes when the server confirmed it, at once when not connected. */
    CompletableFuture<Void> unsubscribe(String channel);
}
