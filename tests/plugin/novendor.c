/* Stands for a vendor library (CUDA runtime, XRT) that the test plugin
 * needs and that is missing at run time. */
int novendor_init(void);
int novendor_init(void) { return 0; }
