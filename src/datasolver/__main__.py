from datasolver.cli import main

main()
