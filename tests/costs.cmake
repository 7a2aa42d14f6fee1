# The measured seconds of the suite's longest tests (docs/TUNING.md, "Test time"): COST makes
# `ctest -j` start them first in any build directory (tests/CMakeLists.txt). A test that is not
# built (another configuration) is ignored.
set_tests_properties(Stress.FiftyCharactersPiledInAPitSleepAsGroups PROPERTIES COST 250)
set_tests_properties(Stress.FiftyRagdollsPiledInAPit PROPERTIES COST 90)
