/** Small helpers every layer uses: argument checks, exception translation, awaiting futures. */
package io.relock.internal.support;
