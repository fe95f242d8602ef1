/**
 * Micrometer meters and observations of Relock's lock events. Exports only
 * {@code io.relock.micrometer}; its API takes Relock's and Micrometer's types, so both are
 * required transitively.
 */
// Micrometer has no module-info: it is required by its Automatic-Module-Name on purpose.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module io.relock.micrometer {
    exports io.relock.micrometer;

    requires transitive io.relock;
    requires transitive micrometer.core;
    requires transitive micrometer.observation;
}
