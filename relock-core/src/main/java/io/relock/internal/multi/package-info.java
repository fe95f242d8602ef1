/**
 * Locks over several locks: the multi-lock (all of them) and RedLock (a majority), whose ideas
 * each have a class: {@code QuorumRound} (one attempt on every member, decided by majority and
 * validity), {@code MajorityRelease} (an unlock done once a majority released) and
 * {@code MemberLanes} (one member's operations for one owner, in turn, with background retries).
 */
package io.relock.internal.multi;
