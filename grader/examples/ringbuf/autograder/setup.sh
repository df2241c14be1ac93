#!/usr/bin/env bash
# On Gradescope's image: a JDK and JUnit 5's console launcher (gradeline's grading
# image has both, so gradeline.yaml says image: base and this is not run there).
apt-get install -y default-jdk-headless junit5 python3
