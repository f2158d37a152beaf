package dev.weir.ring;

import clojure.java.api.Clojure;
import clojure.lang.IFn;
import clojure.lang.Var;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs the clojure.test suites under src/test/clojure as JUnit tests, so Surefire counts them
 * and a failing {@code deftest} fails the build: one container per namespace ending in
 * {@code -test}, one dynamic test per {@code deftest}.
 */
class ClojureTests {
  @TestFactory
  List<DynamicContainer> clojureTests() {
    IFn require = Clojure.var("clojure.core", "require");
    require.invoke(Clojure.read("weir.junit"));
    IFn namespaces = Clojure.var("weir.junit", "test-namespaces");
    IFn testVars = Clojure.var("weir.junit", "test-vars");
    IFn runVar = Clojure.var("weir.junit", "run-var!");

    // Discover namespaces in the sources, not in target/test-classes, where a deleted test
    // file would linger until mvn clean.
    File root = new File(System.getProperty("basedir", "."), "src/test/clojure");
    List<DynamicContainer> containers = new ArrayList<>();
    for (Object ns : (Iterable<?>) namespaces.invoke(root.getPath())) {
      List<DynamicTest> tests = new ArrayList<>();
      for (Object v : (Iterable<?>) testVars.invoke(ns)) {
        Var var = (Var) v;
        tests.add(DynamicTest.dynamicTest(var.sym.getName(), () -> runVar.invoke(var)));
      }
      containers.add(DynamicContainer.dynamicContainer(ns.toString(), tests));
    }
    if (containers.isEmpty()) {
      throw new AssertionError("no Clojure test namespaces found under " + root);
    }
    return containers;
  }
}
