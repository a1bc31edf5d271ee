# How ctest runs MPI programs (tests/dist, apps/pingpong, apps/jacobi3d): under mpirun, up to 4
# ranks on 2 cores (--oversubscribe), each rank's threads free to use every core (--bind-to
# none), as root in a container (the two ALLOW variables), on the shared-memory transports.
set(TESSERA_MPIRUN ${MPIEXEC_EXECUTABLE} --oversubscribe --bind-to none)
# A waiting thread polls 20 us, not the default 200 us, before it sleeps: ranks share the cores.
# ASAN_OPTIONS matters in the asan preset only: the slow unwinder lets OpenMPI's leaks at exit
# be told from ours (tests/dist/lsan.supp).
set(TESSERA_MPI_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 TESSERA_DIST_SPIN_US=20
    LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/dist/lsan.supp
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0)
