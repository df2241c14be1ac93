#!/bin/bash
# Runs once, when the assignment's image is built (as root, with the network): Maven
# from Debian, and the pom's plugins and dependencies resolved into /opt/m2 by building
# a project of one class and one test with it, so that grading runs offline.
set -euo pipefail
apt-get install -y --no-install-recommends maven
warm=/tmp/warm
mkdir -p "$warm/src/main/java/w" "$warm/grading/src/test/java/w"
cp pom.xml "$warm/grading/pom.xml"
echo 'package w; public class W { public static int one() { return 1; } }' \
    > "$warm/src/main/java/w/W.java"
echo 'package w; class WTest { @org.junit.jupiter.api.Test void one() {
    org.junit.jupiter.api.Assertions.assertEquals(1, W.one()); } }' \
    > "$warm/grading/src/test/java/w/WTest.java"
cd "$warm/grading"
GRADELINE_REPORTS="$warm/reports" mvn --batch-mode --quiet -Dmaven.repo.local=/opt/m2 test
test -s "$warm/reports/TEST-w.WTest.xml"
chmod -R a+rX /opt/m2
rm -rf "$warm" /tmp/target
