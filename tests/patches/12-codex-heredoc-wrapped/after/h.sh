echo one
echo 2
