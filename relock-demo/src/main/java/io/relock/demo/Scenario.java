package io.relock.demo;

/**
 * One scenario of the tour: it runs against the demo's Redis, prints its figures into its
 * section of the report, and ends the section with a verdict.
 */
interface Scenario {

    /** The section's title. */
    String title();

    /** One line: what the scenario shows. */
    String whatItShows();

    /**
     * Runs the scenario and records its figures and verdict in {@code section}. An exception
     * ends the section with FAIL.
     *
     * @param section where the figures and the verdict go
     * @throws Exception if something unexpected happens; the demo reports it as a failure
     */
    void run(Report.Section section) throws Exception;
}
