/** Locks over several locks: the multi-lock (all of them) and RedLock (a majority). */
package io.relock.internal.multi;
