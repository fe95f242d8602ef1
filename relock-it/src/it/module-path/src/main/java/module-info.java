/** An application that uses Relock as a module: it reads io.relock and nothing else of it. */
module com.example.modulepath {
    requires io.relock;

    exports com.example.modulepath;
}
