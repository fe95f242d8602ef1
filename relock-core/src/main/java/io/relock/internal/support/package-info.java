/**
 * Small helpers every layer uses: argument checks, exception translation, futures, a client's
 * observers, owner ids.
 */
package io.relock.internal.support;
