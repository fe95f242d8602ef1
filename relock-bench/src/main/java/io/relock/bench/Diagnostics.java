package io.relock.bench;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.Map;

/** Text for reports when something goes wrong: stack traces and thread dumps, never truncated. */
final class Diagnostics {

    private Diagnostics() {
    }

    static String stackTrace(Throwable error) {
        StringWriter text = new StringWriter();
        error.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    /** Every live thread with its state, the lock it waits for, and its whole stack. */
    static String threadDump() {
        StringBuilder dump = new StringBuilder("thread dump:\n");
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            Thread thread = entry.getKey();
            ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(thread.getId());
            dump.append('"').append(thread.getName()).append("\" ").append(thread.getState());
            if (info != null && info.getLockName() != null) {
                dump.append(" on ").append(info.getLockName());
                if (info.getLockOwnerName() != null) {
                    dump.append(" owned by \"").append(info.getLockOwnerName()).append('"');
                }
            }
            dump.append('\n');
            for (StackTraceElement frame : entry.getValue()) {
                dump.append("    at ").append(frame).append('\n');
            }
        }
        return dump.toString();
    }
}
