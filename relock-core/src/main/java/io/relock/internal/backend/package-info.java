/**
 * The seam between the engine and a store: what the engine, the watchdog and the unlock channels
 * ask of a back end (the write path, batched renewals, channels to wait on, retry budgets, a
 * lock's names), with no type of any store. Redis ({@code redis}) implements it in this module;
 * other back ends live in their own modules.
 */
package io.relock.internal.backend;
